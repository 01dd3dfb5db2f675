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
        let path = directory(in: repository) + "lock"
        // Close-on-exec: a credential helper or merge driver started meanwhile must not keep the lock alive.
        let descriptor = open(path, O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else { throw DurableFiles.failure("open \(path)") }
        let deadline = Date().addingTimeInterval(patience)
        var delay: UInt32 = 1_000
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR, Date() < deadline else {
                close(descriptor)
                throw TruceError.busy("another sync is adopting versions into this store (\(path))")
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
///     truce journal intent 1
///     onto <journal tip when written, or 40 zeros>
///     <version id>
///     …
struct JournalIntent {
    let path: String
    /// The journal's tip when the intent was written: entries after it are the only ones that can already record its versions.
    let onto: ObjectID?
    /// In journal order (oldest first per document).
    let versions: [VersionID]

    private static let header = "truce journal intent 1"

    /// Writes the intent for `versions` durably: file and directory fsynced, so it outlives a power loss the heads outlive.
    static func record(_ versions: [VersionID], in repository: Repository) throws -> JournalIntent {
        let directory = SyncLock.directory(in: repository)
        let onto = try repository.reference(ChangeJournal.reference)
        let path = directory + "journal-" + UUID().uuidString
        let text = ([header, "onto " + (onto?.hex ?? String(repeating: "0", count: 40))] + versions.map(\.hex)).joined(separator: "\n") + "\n"
        try writeDurably(Data(text.utf8), to: path, in: directory)
        return JournalIntent(path: path, onto: onto, versions: versions)
    }

    /// Every intent a sync left, oldest file first; one not yet renamed into place, or that does not parse, is removed.
    static func leftovers(in repository: Repository) -> [JournalIntent] {
        let directory = SyncLock.directory(in: repository)
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasPrefix("journal-") }
        return names.compactMap { name -> (JournalIntent, Date)? in
            let path = directory + name
            guard !name.hasSuffix(".tmp"), let intent = read(path) else {
                // Renamed into place only once whole and fsynced, before any head is published: such a file guards no head.
                unlink(path)
                return nil
            }
            return (intent, DocumentStore.fileIdentity(path)?.modified ?? .distantPast)
        }.sorted { $0.1 < $1.1 }.map(\.0)
    }

    private static func read(_ path: String) -> JournalIntent? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count >= 3, lines[0] == header, lines.last == "", lines[1].hasPrefix("onto "),
            let onto = ObjectID(hex: String(lines[1].dropFirst(5)))
        else { return nil }
        var versions: [VersionID] = []
        for line in lines.dropFirst(2).dropLast() {
            guard let id = VersionID(hex: String(line)) else { return nil }
            versions.append(id)
        }
        return JournalIntent(path: path, onto: onto.bytes.allSatisfy { $0 == 0 } ? nil : onto, versions: versions)
    }

    /// The versions the journal already records after `onto`.
    func journaledSinceWritten(in repository: Repository) throws -> Set<VersionID> {
        guard let tip = try repository.reference(ChangeJournal.reference) else { return [] }
        // A journal that no longer holds `onto` is one Truce never writes (it only appends); then nothing counts as journaled.
        return Set((try ChangeJournal.changes(from: tip, after: onto, in: repository) ?? []).map(\.version))
    }

    func remove() { unlink(path) }

    private static func writeDurably(_ data: Data, to path: String, in directory: String) throws {
        let temporary = path + ".tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw DurableFiles.failure("create \(temporary)") }
        defer { close(descriptor) }
        do {
            try DurableFiles.writeAll(data, to: descriptor, path: temporary)
            guard fsync(descriptor) == 0 else { throw DurableFiles.failure("fsync \(temporary)") }
            guard rename(temporary, path) == 0 else { throw DurableFiles.failure("rename \(temporary)") }
        } catch {
            unlink(temporary)
            throw error
        }
        DurableFiles.syncDirectory(directory)
    }
}

extension DocumentStore {
    /// Takes the store's `SyncLock` and journals what a killed sync published but did not journal.
    ///
    /// Call it before reading which heads the store lacks, and hold it until
    /// the adopted versions are journaled.
    static func lockForAdopting(in repository: Repository) throws -> SyncLock {
        let lock = try SyncLock.acquire(in: repository)
        for intent in JournalIntent.leftovers(in: repository) {
            do { try completeLeftover(intent, in: repository) } catch {
                lock.release()
                throw error
            }
        }
        return lock
    }

    /// Journals the versions of a dead sync's intent that a head reaches and the journal lacks, updates their
    /// documents' conflict markers, and removes the intent.
    static func completeLeftover(_ intent: JournalIntent, in repository: Repository) throws {
        var changes: [Change] = []
        var headsByKey: [DocumentKey: [ObjectID]] = [:]
        for id in intent.versions {
            guard try repository.containsCommit(id.objectID), let key = try documentKey(of: id.objectID, in: repository) else { continue }
            let heads = try headsByKey[key] ?? headReferences(of: key, in: repository).map(\.target)
            headsByKey[key] = heads
            // Only what a head reaches: a version the dead sync never published is not in the store for `changes`.
            guard try heads.contains(where: { try $0 == id.objectID || repository.isDescendant($0, of: id.objectID) }) else { continue }
            changes.append(change(recording: try readVersion(id, of: key, in: repository)))
        }
        try recordChanges(changes, intent: intent, in: repository)
        for key in headsByKey.keys { _ = try? ConflictIndex.update(key, in: repository) }
        intent.remove()
    }

    /// Appends the `changes` the journal does not record since `intent` was written (prune may have journaled some).
    static func recordChanges(
        _ changes: [Change], via: [VersionID: ObjectID] = [:], intent: JournalIntent,
        in repository: Repository
    ) throws {
        let journaled = try intent.journaledSinceWritten(in: repository)
        try ChangeJournal.append(changes.filter { !journaled.contains($0.version) }, via: via, in: repository)
    }
}

/// Test-only: a place where a process stops so that a test can kill it exactly there.
///
/// Only the test suite sets `TRUCE_TEST_PAUSE_AT`; with it set to a point's
/// name, the process reaching that point says so on stderr and sleeps for up
/// to a minute, then goes on. Without it, this is one environment lookup.
enum TestPause {
    private static let point = ProcessInfo.processInfo.environment["TRUCE_TEST_PAUSE_AT"]
    nonisolated(unsafe) private static var paused = false

    static func at(_ name: String) {
        guard point == name, !paused else { return }
        paused = true
        FileHandle.standardError.write(Data("truce: test pause at \(name), pid \(getpid())\n".utf8))
        sleep(60)
    }
}
