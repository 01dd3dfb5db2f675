import Foundation
internal import TruceGit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

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
            return (intent, StaleLocks.fileIdentity(path)?.modified ?? .distantPast)
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
        return Set((try ChangeJournal(repository: repository).changes(from: tip, after: onto) ?? []).map(\.version))
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

/// Completing what a killed sync published but did not journal.
extension StoreEngine {
    /// Takes the store's `SyncLock` and journals what a killed sync published but did not journal.
    ///
    /// Call it before reading which heads the store lacks, and hold it until
    /// the adopted versions are journaled.
    func lockForAdopting() throws -> SyncLock {
        let lock = try SyncLock.acquire(in: repository)
        for intent in JournalIntent.leftovers(in: repository) {
            do { try completeLeftover(intent) } catch {
                lock.release()
                throw error
            }
        }
        return lock
    }

    /// Journals the versions of a dead sync's intent that a head reaches and the journal lacks, updates their
    /// documents' conflict markers, and removes the intent.
    func completeLeftover(_ intent: JournalIntent) throws {
        var changes: [Change] = []
        var headsByKey: [DocumentKey: [ObjectID]] = [:]
        for id in intent.versions {
            guard try repository.containsCommit(id.objectID), let key = try documentKey(of: id.objectID) else { continue }
            let heads = try headsByKey[key] ?? headReferences(of: key).map(\.target)
            headsByKey[key] = heads
            // Only what a head reaches: a version the dead sync never published is not in the store for `changes`.
            guard try heads.contains(where: { try $0 == id.objectID || repository.isDescendant($0, of: id.objectID) }) else { continue }
            changes.append(Change(recording: try readVersion(id, of: key)))
        }
        try recordChanges(changes, intent: intent)
        for key in headsByKey.keys { _ = try? updateConflictMarker(of: key) }
        intent.remove()
    }

    /// Appends the `changes` the journal does not record since `intent` was written (prune may have journaled some).
    func recordChanges(
        _ changes: [Change], via: [VersionID: ObjectID] = [:], intent: JournalIntent
    ) throws {
        let journaled = try intent.journaledSinceWritten(in: repository)
        try ChangeJournal(repository: repository).append(changes.filter { !journaled.contains($0.version) }, via: via)
    }
}
