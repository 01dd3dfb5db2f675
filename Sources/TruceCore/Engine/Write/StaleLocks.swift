import Foundation
internal import TruceGit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Lock files that killed writers leave behind, and taking them over once they are stale.
enum StaleLocks {
    /// How old a lock file must be before Truce takes it for one a killed process left behind.
    ///
    /// A live writer holds a ref lock for one write, fsync and rename:
    /// milliseconds. Five seconds is far beyond that and bounds how long a
    /// crash can block the next writer.
    static let staleLockAge: TimeInterval = 5

    /// Runs `body`, retrying while another process holds the lock file of `path` (a ref name or `logs/<ref>`).
    ///
    /// A lock older than `staleLockAge` is removed (and `packed-refs.lock` the
    /// same way, which deletions of packed refs take too); a younger one is
    /// waited for. After `staleLockAge` and two more seconds the operation
    /// fails with `TruceError.busy`, which callers may retry.
    static func withLockRetries(on path: String, in repository: Repository, _ body: () throws -> Void) throws {
        let lockFiles = [repository.gitDirectory + path + ".lock", repository.gitDirectory + "packed-refs.lock"]
        let deadline = Date().addingTimeInterval(staleLockAge + 2)
        var delay: UInt32 = 1_000
        while true {
            do {
                try body()
                return
            } catch let error as GitError where error.isLocked {
                guard Date() < deadline else { throw TruceError.busy(error.message) }
                lockFiles.forEach(removeIfStale)
                usleep(delay)
                delay = min(delay * 2, 100_000)
            }
        }
    }

    /// Removes `lockFile` if it is older than `staleLockAge`, never a lock another process just took.
    ///
    /// The file is first renamed aside (only one process can win that), then
    /// checked to be the same old file that was judged stale; a fresh lock
    /// caught in between is put back.
    static func removeIfStale(_ lockFile: String) {
        guard let judged = fileIdentity(lockFile), Date().timeIntervalSince(judged.modified) > staleLockAge else { return }
        takeAside(lockFile, ifStillFile: judged.number)
    }

    /// Removes every stale `*.lock` file under `directory` (relative to the git directory, with a trailing slash).
    ///
    /// Every version gets a head ref of its own name, so a writer killed while
    /// creating one leaves `<id>.lock` on a ref no later writer ever takes:
    /// `withLockRetries` never meets it, and `git gc` fails on it ("cannot lock
    /// ref") as soon as the reflog entry libgit2 wrote first is there.
    static func removeStaleLocks(under directory: String, in repository: Repository) {
        let root = repository.gitDirectory + directory
        for relative in DirectoryWalk.files(under: root) where relative.hasSuffix(".lock") { removeIfStale(root + relative) }
    }

    /// Renames `path` aside and deletes it if it is still the file numbered `number`; a fresh file caught in between
    /// is put back where its owner expects it. Only one process can win the rename.
    static func takeAside(_ path: String, ifStillFile number: UInt64) {
        let aside = path + ".stale-\(getpid())"
        guard rename(path, aside) == 0 else { return }
        if fileIdentity(aside)?.number != number { _ = link(aside, path) }
        unlink(aside)
    }

    /// A file's inode number and modification date, nil when it does not exist.
    static func fileIdentity(_ path: String) -> (number: UInt64, modified: Date)? {
        DurableFiles.status(path).map { ($0.number, $0.modified) }
    }
}

extension Repository {
    /// Runs `body`, retrying while another process holds the lock of `path`; see `StaleLocks.withLockRetries`.
    func withLockRetries(on path: String, _ body: () throws -> Void) throws {
        try StaleLocks.withLockRetries(on: path, in: self, body)
    }

    /// Removes every stale `*.lock` file under `directory`; see `StaleLocks.removeStaleLocks`.
    func removeStaleLocks(under directory: String) {
        StaleLocks.removeStaleLocks(under: directory, in: self)
    }
}
