import Foundation
internal import TruceGit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The lock that keeps two syncs from adopting versions into one store at once: `flock` on `<store>/truce-sync/lock`.
///
/// The kernel releases it when its process dies, however it dies, so a sync
/// holding it knows that every journal intent in `truce-sync/` was left by a
/// sync that is gone: no live one is between publishing heads and journaling them.
struct SyncLock {
    private let descriptor: Int32

    /// How long a sync waits for another one adopting into the same store (local work only: no network while it holds the lock).
    static let patience: TimeInterval = 60

    static func directory(in repository: Repository) -> String { repository.gitDirectory + "truce-sync/" }

    /// Creates the lock file (and its directory) so that taking the lock later writes nothing new into the store.
    static func prepare(in repository: Repository) throws {
        try FileManager.default.createDirectory(atPath: directory(in: repository), withIntermediateDirectories: true)
        let descriptor = open(directory(in: repository) + "lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw DurableFiles.failure("create \(directory(in: repository))lock") }
        close(descriptor)
    }

    /// Waits for the lock, then holds it until `release`; throws `TruceError.busy` after `patience`.
    static func acquire(in repository: Repository) throws -> SyncLock {
        try prepare(in: repository)
        return try acquire(file: directory(in: repository) + "lock", holder: "another sync is adopting versions into this store")
    }

    /// Waits for an exclusive `flock` on `path` (created if missing), then holds it until `release`; throws
    /// `TruceError.busy`, naming `holder`, after `patience`.
    static func acquire(file path: String, holder: String) throws -> SyncLock {
        // Close-on-exec: a credential helper or merge driver started meanwhile must not keep the lock alive.
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw DurableFiles.failure("open \(path)") }
        let deadline = Date().addingTimeInterval(patience)
        var delay: UInt32 = 1_000
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR, Date() < deadline else {
                close(descriptor)
                throw TruceError.busy("\(holder) (\(path))")
            }
            usleep(delay)
            delay = min(delay * 2, 100_000)
        }
        return SyncLock(descriptor: descriptor)
    }

    func release() {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }

}

/// The versions a sync is about to make heads, written down (and fsynced) before the first head is published.
///
/// A sync publishes heads, then journals them. Killed in between, it leaves
/// this file, `truce-sync/journal-<uuid>`; the next sync of the store, holding
/// the `SyncLock`, journals every version in it that a head now reaches and
/// that the journal lacks since `onto`, then removes it. The cost follows the
/// versions of that one sync, not the store.
///
