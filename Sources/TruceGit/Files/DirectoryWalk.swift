import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Listing the files below a directory with `readdir` and the entry types it gives.
///
/// `FileManager.enumerator` builds an `NSString` path and reads the
/// attributes of every entry: over a store's ref and reflog folders (one
/// folder per document) that made the walks prune takes cost more than the
/// work they were for.
package enum DirectoryWalk {
    /// The regular files below `path` (ending in `/`), relative to it; none when it does not exist, as for most
    /// documents' heads once they are packed.
    package static func files(under path: String) -> [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var files: [String] = []
        while let entry = readdir(directory) {
            // Read in place: a record is only as long as its name, so the 256-byte `d_name` must not be copied or written back.
            let record = UnsafeRawPointer(entry)
            let name = String(cString: (record + MemoryLayout<dirent>.offset(of: \dirent.d_name)!).assumingMemoryBound(to: CChar.self))
            guard name != ".", name != ".." else { continue }
            var type = Int32(record.load(fromByteOffset: MemoryLayout<dirent>.offset(of: \dirent.d_type)!, as: UInt8.self))
            if type == Int32(DT_UNKNOWN) {
                var status = stat()
                guard lstat(path + name, &status) == 0 else { continue }
                type = (status.st_mode & S_IFMT) == S_IFDIR ? Int32(DT_DIR) : (status.st_mode & S_IFMT) == S_IFREG ? Int32(DT_REG) : type
            }
            if type == Int32(DT_DIR) {
                files += DirectoryWalk.files(under: path + name + "/").map { name + "/" + $0 }
            } else if type == Int32(DT_REG) {
                files.append(name)
            }
        }
        return files
    }
}
