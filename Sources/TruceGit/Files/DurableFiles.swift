internal import CGitShim
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The system calls behind files that must survive a power loss: whole writes, fsynced directories, errors that say why.
///
/// Every durable file Truce writes itself (`packed-refs`, a sync's journal
/// intent, a downloaded pack moved into the store) is written whole to a
/// temporary name, fsynced, renamed into place, and its directory fsynced,
/// so that a crash leaves the old file or the new one.
package enum DurableFiles {
    /// A `GitError` for the system call that just failed, with the system's reason (`errno`).
    package static func failure(_ operation: String) -> GitError {
        GitError(operation: operation, code: -1, errorClass: 0, message: String(cString: strerror(errno)))
    }

    /// Writes every byte of `bytes` to `descriptor`, through short writes and interrupted calls.
    package static func writeAll(_ bytes: some ContiguousBytes, to descriptor: Int32, path: String) throws(GitError) {
        let complete = bytes.withUnsafeBytes { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0, errno == EINTR { continue }
                if written <= 0 { return false }
                offset += written
            }
            return true
        }
        if !complete { throw failure("write \(path)") }
    }

    /// Replaces the file at `path` with `bytes`: written under a temporary name beside it (`<path>.tmp-…`), fsynced,
    /// renamed over it and its directory fsynced, so that a crash leaves the old file or the new one, whole.
    package static func replace(_ path: String, with bytes: [UInt8]) throws(GitError) {
        let temporary = path + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw failure("create \(temporary)") }
        var renamed = false
        defer { if !renamed { unlink(temporary) } }
        do {
            defer { close(descriptor) }
            try writeAll(bytes, to: descriptor, path: temporary)
            guard fsync(descriptor) == 0 else { throw failure("fsync \(temporary)") }
        }
        guard rename(temporary, path) == 0 else { throw failure("rename \(temporary)") }
        renamed = true
        syncDirectory(String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)]))
    }

    /// The directories above `path` that do not exist yet, nearest the root first: those a writer of `path` creates.
    package static func missingDirectories(holding path: String) -> [String] {
        var missing: [String] = []
        var directory = path[..<(path.lastIndex(of: "/") ?? path.startIndex)]
        var status = stat()
        while !directory.isEmpty, stat(String(directory), &status) != 0 {
            missing.insert(String(directory), at: 0)
            directory = directory[..<(directory.lastIndex(of: "/") ?? directory.startIndex)]
        }
        return missing
    }

    /// Fsyncs the parent of each directory in `directories` that now exists, so that their names survive a power loss.
    package static func syncParents(of directories: [String]) {
        for directory in directories where access(directory, F_OK) == 0 {
            syncDirectory(String(directory[..<(directory.lastIndex(of: "/") ?? directory.startIndex)]))
        }
    }

    /// Makes the removal or rewrite of `path` survive a power loss: fsyncs the file when it is there, and the nearest
    /// directory above it that still exists (a directory emptied and removed goes with its parent's fsync).
    package static func syncRemovalOrRewrite(of path: String) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        if descriptor >= 0 {
            fsync(descriptor)
            close(descriptor)
        }
        var directory = path[..<(path.lastIndex(of: "/") ?? path.startIndex)]
        while !directory.isEmpty, access(String(directory), F_OK) != 0 {
            directory = directory[..<(directory.lastIndex(of: "/") ?? directory.startIndex)]
        }
        if !directory.isEmpty { syncDirectory(String(directory)) }
    }

    /// Makes the removals and rewrites of `paths`, all under `root`, survive a power loss, as
    /// `syncRemovalOrRewrite(of:)` does for one.
    ///
    /// Many at once (prune's rewritten reflogs and removed refs, one directory
    /// each) go with one `syncfs` of the file system holding `root` on Linux:
    /// a file's fsync and its directory's each wait for a journal commit, where
    /// `syncfs` waits for one. A few, or where there is no `syncfs`, are
    /// fsynced one by one.
    package static func syncRemovalsOrRewrites(of paths: [String], under root: String) {
        if paths.count > 16 {
            let descriptor = open(root, O_RDONLY | O_CLOEXEC)
            if descriptor >= 0 {
                defer { close(descriptor) }
                if truce_syncfs(descriptor) == 0 { return }
            }
        }
        for path in paths { syncRemovalOrRewrite(of: path) }
    }

    /// Fsyncs a directory, so that the renames and new names in it survive a power loss; best effort.
    package static func syncDirectory(_ path: String) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        close(descriptor)
    }

    /// A file's inode number, modification date and size, nil when it does not exist: one `stat`.
    ///
    /// Foundation's `attributesOfItem` also looks up the owner's and group's
    /// names (reading `/etc/passwd` and `/etc/group`) and extended attributes:
    /// a dozen system calls a write paid for every pack it looked at.
    package static func status(_ path: String) -> (number: UInt64, modified: Date, size: Int)? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        #if canImport(Darwin)
            let time = info.st_mtimespec
        #else
            let time = info.st_mtim
        #endif
        let modified = Date(timeIntervalSince1970: TimeInterval(time.tv_sec) + TimeInterval(time.tv_nsec) / 1e9)
        return (UInt64(info.st_ino), modified, Int(info.st_size))
    }
}
