import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Files below a root folder, reached one name at a time from the root's descriptor without following symbolic links.
///
/// Names are bytes, as the file system holds them: a name that is not UTF-8
/// is still listed (and then refused by name), never lost or mangled. Every
/// component is opened with `O_NOFOLLOW`, so a symbolic link swapped in
/// after the listing cannot lead a read or a write out of the root.
enum FileTree {
    /// What a listed entry is.
    enum Kind: Equatable {
        case file
        case directory
        case symbolicLink
        /// A named pipe, socket or device, described in words.
        case special(String)
        /// A directory that could not be opened, with the reason.
        case unreadable(String)
    }

    /// One listed entry: its path below the root as name components, its kind, and its file identity.
    struct Entry {
        let components: [[UInt8]]
        let kind: Kind
        let device: UInt64
        let inode: UInt64
    }

    /// A file system call that failed, with the reason in words.
    struct Failure: Error {
        let reason: String
        let code: Int32
    }

    /// Opens the folder at `path` (following it when it is a link: the caller named it) and returns its descriptor.
    static func openFolder(_ path: String) throws(Failure) -> Int32 {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure() }
        return descriptor
    }

    /// The device and inode of `path`, nil when it cannot be read.
    static func identity(of path: String) -> (device: UInt64, inode: UInt64)? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return (UInt64(info.st_dev), UInt64(info.st_ino))
    }

    /// Lists everything below the folder `root`, depth first in byte order of names; `descend` says which directories to enter.
    static func walk(_ root: Int32, descend: (Entry) -> Bool) -> [Entry] {
        var found: [Entry] = []
        walk(duplicate(root), below: [], into: &found, descend: descend)
        return found
    }

    private static func walk(_ folder: Int32, below prefix: [[UInt8]], into found: inout [Entry], descend: (Entry) -> Bool) {
        guard let stream = fdopendir(folder) else {
            close(folder)
            return
        }
        defer { closedir(stream) }
        var names: [[UInt8]] = []
        while let record = readdir(stream) {
            let name = withUnsafeBytes(of: record.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
            if name != [0x2E], name != [0x2E, 0x2E] { names.append(name) }
        }
        for name in names.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            var info = stat()
            let components = prefix + [name]
            let listed = withCName(name) { fstatat(dirfd(stream), $0, &info, AT_SYMLINK_NOFOLLOW) } == 0
            guard listed else {
                found.append(Entry(components: components, kind: .unreadable(failure().reason), device: 0, inode: 0))
                continue
            }
            let entry = Entry(components: components, kind: kind(of: info.st_mode), device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
            guard entry.kind == .directory, descend(entry) else {
                found.append(entry)
                continue
            }
            let child = withCName(name) { openat(dirfd(stream), $0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
            guard child >= 0 else {
                found.append(Entry(components: components, kind: .unreadable(failure().reason), device: entry.device, inode: entry.inode))
                continue
            }
            found.append(entry)
            walk(child, below: components, into: &found, descend: descend)
        }
    }

    /// Reads the regular file at `components` below `root`; a link, a special file or a missing file anywhere on the way fails.
    static func read(_ components: [[UInt8]], below root: Int32) throws(Failure) -> Data {
        let folder = try openFolders(components.dropLast(), below: root, creating: false)
        defer { if folder != root { close(folder) } }
        let descriptor = withCName(components.last!) { openat(folder, $0, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) }
        guard descriptor >= 0 else { throw failure() }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw failure() }
        guard case .file = kind(of: info.st_mode) else { throw Failure(reason: "it is no longer a regular file", code: 0) }
        var data = Data(capacity: Int(info.st_size))
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { readBytes(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return data }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure()
            }
            data.append(contentsOf: buffer[0..<count])
        }
    }

    /// Writes `data` as the file at `components` below `root`, creating folders; a link on the way or at the end fails.
    static func write(_ data: Data, to components: [[UInt8]], below root: Int32) throws(Failure) {
        let folder = try openFolders(components.dropLast(), below: root, creating: true)
        defer { if folder != root { close(folder) } }
        let descriptor = withCName(components.last!) { openat(folder, $0, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o666) }
        guard descriptor >= 0 else { throw failure() }
        defer { close(descriptor) }
        var offset = 0
        while offset < data.count {
            let count = data.withUnsafeBytes { writeBytes(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure()
            }
            offset += count
        }
    }

    /// Opens the folder at `components` below `root` one name at a time, never through a link; returns `root` itself for none.
    private static func openFolders(_ components: ArraySlice<[UInt8]>, below root: Int32, creating: Bool) throws(Failure) -> Int32 {
        var folder = root
        for name in components {
            if creating { _ = withCName(name) { mkdirat(folder, $0, 0o777) } }
            let next = withCName(name) { openat(folder, $0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
            let error = failure()
            let parent = folder
            defer { if parent != root { close(parent) } }
            guard next >= 0 else {
                let shown = display(name)
                // O_DIRECTORY reports a link as "not a directory" before O_NOFOLLOW can say it is a link.
                if error.code == ELOOP || (error.code == ENOTDIR && isLink(name, in: parent)) {
                    throw Failure(reason: "'\(shown)' on its path is a symbolic link (not followed)", code: ELOOP)
                }
                if error.code == ENOTDIR { throw Failure(reason: "'\(shown)' on its path is a file, not a folder", code: ENOTDIR) }
                throw error
            }
            folder = next
        }
        return folder
    }

    private static func isLink(_ name: [UInt8], in folder: Int32) -> Bool {
        var info = stat()
        return withCName(name) { fstatat(folder, $0, &info, AT_SYMLINK_NOFOLLOW) } == 0 && info.st_mode & S_IFMT == S_IFLNK
    }

    private static func kind(of mode: mode_t) -> Kind {
        switch mode & S_IFMT {
        case S_IFREG: .file
        case S_IFDIR: .directory
        case S_IFLNK: .symbolicLink
        case S_IFIFO: .special("a named pipe")
        case S_IFSOCK: .special("a socket")
        case S_IFCHR, S_IFBLK: .special("a device")
        default: .special("not a regular file")
        }
    }

    /// `errno` now, in words; a missing file is said the way an import that lost it needs.
    private static func failure() -> Failure {
        let code = errno
        switch code {
        case ENOENT: return Failure(reason: "it vanished (no such file)", code: code)
        case ELOOP: return Failure(reason: "it is a symbolic link (not followed)", code: code)
        case EISDIR: return Failure(reason: "a folder has that name", code: code)
        default: return Failure(reason: String(cString: strerror(code)).lowercased(), code: code)
        }
    }

    private static func duplicate(_ descriptor: Int32) -> Int32 { fcntl(descriptor, F_DUPFD_CLOEXEC, 0) }

    private static func withCName<T>(_ name: [UInt8], _ body: (UnsafePointer<CChar>) -> T) -> T {
        (name + [0]).withUnsafeBufferPointer { bytes in bytes.withMemoryRebound(to: CChar.self) { body($0.baseAddress!) } }
    }

    /// Path components as one line of text: `/`-joined, bytes that are not UTF-8 or are control characters as `\xNN`.
    static func display(_ components: [[UInt8]]) -> String {
        components.map(display).joined(separator: "/")
    }

    static func display(_ name: [UInt8]) -> String {
        var text = ""
        var rest = name[...]
        while !rest.isEmpty {
            var decoder = UTF8()
            var iterator = rest.makeIterator()
            guard case .scalarValue(let scalar) = decoder.decode(&iterator) else {
                text += String(format: "\\x%02X", rest.first!)
                rest = rest.dropFirst()
                continue
            }
            let length = String(scalar).utf8.count
            if scalar.value < 0x20 || scalar.value == 0x7F {
                text += String(format: "\\x%02X", scalar.value)
            } else {
                text.unicodeScalars.append(scalar)
            }
            rest = rest.dropFirst(length)
        }
        return text
    }
}

// Top-level, so that inside `FileTree` the names reach the C functions and not its own `read` and `write`.
private func readBytes(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int { read(descriptor, buffer, count) }
private func writeBytes(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int { write(descriptor, buffer, count) }

extension FileTree {
    /// Refuses a path that is a file, or a folder with anything in it unless `overwrite`.
    static func checkExportFolder(_ path: String, overwrite: Bool) throws(TruceError) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return }
        guard isDirectory.boolValue else { throw .invalidFolder(path, reason: "it is a file, not a folder") }
        guard let contents = try? FileManager.default.contentsOfDirectory(atPath: path) else {
            throw .invalidFolder(path, reason: "cannot list it")
        }
        if !contents.isEmpty, !overwrite {
            throw .invalidFolder(path, reason: "it is not empty; export writes into a new or empty folder unless told to overwrite (--force)")
        }
    }

    /// True when `path` (which need not exist yet) is `folder` or below it, links resolved.
    static func isInside(_ path: String, _ folder: String) -> Bool {
        func resolved(_ path: String) -> String {
            var existing = URL(fileURLWithPath: path).standardizedFileURL
            var rest: [String] = []
            while !FileManager.default.fileExists(atPath: existing.path), existing.path != "/" {
                rest.insert(existing.lastPathComponent, at: 0)
                existing.deleteLastPathComponent()
            }
            let real =
                realpath(existing.path, nil).map { pointer in
                    defer { free(pointer) }
                    return String(cString: pointer)
                } ?? existing.path
            return ([real == "/" ? "" : real] + rest).joined(separator: "/")
        }
        let inner = resolved(path), outer = resolved(folder)
        return inner == outer || inner.hasPrefix(outer + "/")
    }
}
