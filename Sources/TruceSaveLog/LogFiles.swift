import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The two file-system calls the log needs beyond reads, writes and syncs of its own file.
enum LogFiles {
    /// fsyncs the directory `path`, so that a file created or linked in it survives a power loss.
    static func syncDirectory(_ path: String) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        close(descriptor)
    }

    /// A file's inode number and modification date, nil when it does not exist: one `stat`.
    static func status(_ path: String) -> (number: UInt64, modified: Date)? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        #if canImport(Darwin)
            let time = info.st_mtimespec
        #else
            let time = info.st_mtim
        #endif
        return (UInt64(info.st_ino), Date(timeIntervalSince1970: TimeInterval(time.tv_sec) + TimeInterval(time.tv_nsec) / 1e9))
    }
}
