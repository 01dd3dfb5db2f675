import Foundation
internal import TruceGit

/// What one prune removed and kept.
public struct PruneReport: Sendable, Codable {
    /// Documents whose only head was a deletion older than the grace period: their refs are gone.
    public let droppedDocuments: [DocumentKey]
    /// Reflog entries older than the grace period.
    public let expiredReflogEntries: Int
    /// Objects written into the new pack: everything something still needs.
    public let packedObjects: Int
    /// Loose objects, packs and temporary files deleted.
    public let removedFiles: Int
    /// Bytes in the object database before and after.
    public let bytesBefore: Int
    /// The same, after.
    public let bytesAfter: Int
}

extension DocumentStore {
    /// Reclaims the space of everything no ref, no resolution history and no reflog entry younger than `expire` needs.
    ///
    /// libgit2 has no gc, so prune does git's work itself: expire old reflog
    /// entries, mark every object reachable from a ref or a kept reflog entry,
    /// repack the marked set into one pack (fsynced), and only then delete
    /// loose objects it holds, unreachable ones older than the grace period,
    /// and the old packs: at once when the new pack holds all their objects
    /// (so prunes without writes keep the store's size flat), else once they
    /// are older than the grace period. A prune killed at any point leaves every object in a
    /// loose file or a pack. Heads, resolution history and the merge base of
    /// an open conflict are reachable from head refs, so they always stay.
    /// Like `git gc --prune=now`, `expire: 0` is safe only when no other
    /// process is writing: a save's objects are unreachable until its ref lands.
    @discardableResult
    public func prune(expire: TimeInterval = Expiry.defaultGrace, progress: (@Sendable (String) -> Void)? = nil) throws(TruceError) -> PruneReport {
        try prune(expire: expire, progress: progress, cancellation: nil)
    }

    /// `prune`, stopping with `TruceError.cancelled` once `cancellation` is set, at each step before the new pack is
    /// written: nothing is deleted then, and what ran before only tidied.
    func prune(expire: TimeInterval, progress: (@Sendable (String) -> Void)?, cancellation: Cancellation?) throws(TruceError) -> PruneReport {
        let now = Date()
        // A grace period reaching back before year 1 keeps everything, as `never` does; the seconds below would overflow.
        let cutoff = expire.isInfinite || expire > now.timeIntervalSince(.distantPast) ? Date.distantPast : now.addingTimeInterval(-expire)
        // git stores whole seconds: round up so that `--now` covers what was written this very second.
        let cutoffSeconds = Int64(cutoff.timeIntervalSince1970.rounded(.up))
        let gitDirectory = try withRepository { $0.gitDirectory }
        let lock = try PruneLock.acquire(in: gitDirectory)
        defer { lock.release() }
        // A repack takes long: on a handle of its own, so that reads and saves meanwhile do not wait behind it.
        return try withOwnRepository { repository in
            try cancellation?.check()
            // Ref and reflog locks killed writers left: some sit on refs no later writer takes, and would block git gc.
            Self.removeStaleLocks(under: "refs/", in: repository)
            Self.removeStaleLocks(under: "logs/", in: repository)
            try Self.recordMissingChanges(in: repository)
            let dropped = try Self.tidyHeads(droppingDeletionsOlderThan: cutoffSeconds, in: repository)
            try ConflictIndex.rebuild(in: repository)
            let references = try repository.references(matching: "refs/*")
            // Reflogs whose reference a killed writer never created are expired and marked like the others:
            // git fsck reads their entries too.
            let reflogs = Set(references.map(\.name)).union(repository.reflogNames()).sorted()
            try cancellation?.check()
            var expired = 0
            for name in reflogs where !expire.isInfinite {
                try Self.withLockRetries(on: "logs/" + name, in: repository) {
                    expired += try repository.expireReflog(of: name, olderThan: cutoffSeconds)
                }
            }
            // Files are listed before marking: objects written after this point are never deleted.
            let files = repository.objectFiles()
            let bytesBefore = (files.loose + files.packs + files.temporary).reduce(0) { $0 + $1.size }
            try cancellation?.check()
            progress?("marking reachable objects")
            let tips = try repository.reflogIDs(of: reflogs).union(references.map(\.target)).filter { $0.bytes.contains { $0 != 0 } }
            let reachable = try repository.reachableObjects(from: Array(tips))
            try cancellation?.check()
            progress?("packing \(reachable.count) objects")
            let pack =
                reachable.isEmpty
                ? nil
                : try repository.writePack(of: reachable) { done, total in
                    progress?("packing objects: \(done)/\(total)")
                }
            progress?("removing what nothing needs")
            var removed = 0
            for file in files.loose where reachable.contains(file.id!) || file.modified < cutoff {
                if (try? FileManager.default.removeItem(atPath: file.path)) != nil { removed += 1 }
            }
            for file in files.packs where !file.path.hasSuffix("/\(pack ?? "-").pack") {
                guard file.modified < cutoff || Self.isSuperseded(file.path, by: reachable, in: repository) else { continue }
                removed += Self.removePack(file.path)
            }
            let temporaryCutoff = max(cutoff, now.addingTimeInterval(-Self.temporaryFileAge))
            for file in files.temporary where file.modified < temporaryCutoff {
                removed += Self.removePack(file.path)
            }
            // A writer creates objects/xx/ before renaming its object into it, so removing an empty
            // directory under a live writer fails that write: only --now, unsafe beside writers anyway, removes them.
            if expire == 0 { Self.removeEmptyObjectDirectories(gitDirectory + "objects/") }
            let after = repository.objectFiles()
            return PruneReport(
                droppedDocuments: dropped, expiredReflogEntries: expired, packedObjects: reachable.count, removedFiles: removed,
                bytesBefore: bytesBefore, bytesAfter: (after.loose + after.packs + after.temporary).reduce(0) { $0 + $1.size })
        }
    }

    /// Drops the head refs of documents whose only head is a deletion written before `cutoff` (seconds since 1970),
    /// and every head ref that another head of its document descends from.
    ///
    /// A save leaves the packed head it supersedes in place (removing one line
    /// rewrites the whole file) and readers skip it; here they all go in one
    /// rewrite.
    private static func tidyHeads(droppingDeletionsOlderThan cutoff: Int64, in repository: Repository) throws -> [DocumentKey] {
        var dropped: [DocumentKey] = []
        var leaving: [(name: String, target: ObjectID)] = []
        for references in try headReferencesByDocument(in: repository) {
            guard let key = try documentKey(of: references[0].target, in: repository) else { continue }
            let versions = try documentVersions(of: key, in: repository)
            if versions.state == .deleted, let current = versions.current, try repository.readCommit(current.id.objectID).committer.time < cutoff {
                leaving += references
                dropped.append(key)
            } else {
                let heads = Set(versions.allHeads.map(\.id.objectID))
                leaving += references.filter { !heads.contains($0.target) }
            }
        }
        try withLockRetries(on: "packed-refs", in: repository) {
            try repository.deleteReferences(leaving)
        }
        return dropped.sorted()
    }

    /// Journals any head history a crash kept out of the journal, so `changes` misses nothing for long.
    private static func recordMissingChanges(in repository: Repository) throws {
        var journaled = Set<VersionID>()
        var entry = try repository.reference(ChangeJournal.reference)
        while let current = entry {
            let commit = try repository.readCommit(current)
            for recorded in try ChangeJournal.recorded(in: commit, of: repository) ?? [] { journaled.insert(recorded.change.version) }
            entry = commit.parents.first
        }
        let heads = try repository.references(under: ReferenceLayout.headsRoot).map(\.target)
        var missing: [Change] = []
        for id in try repository.walk(from: heads, oldestFirst: true).map(VersionID.init) where !journaled.contains(id) {
            guard let key = try documentKey(of: id.objectID, in: repository) else { continue }
            missing.append(change(recording: try readVersion(id, of: key, in: repository)))
        }
        try ChangeJournal.append(missing, in: repository)
    }

    /// How long a temporary file libgit2 writes (a fetched pack, a loose object) may go untouched before prune takes its
    /// writer for dead, whatever the grace period: a live writer touches it every moment, and nothing refers to it.
    static let temporaryFileAge: TimeInterval = 3600

    /// True when every object of `pack` is in the pack prune has just written (and fsynced): it can go at once.
    ///
    /// A process that has the old pack open keeps reading it after the
    /// unlink; one that finds it gone before opening it (libgit2 or git)
    /// looks again, rescans the pack directory and finds the objects in the
    /// new pack. A `.keep` file marks a pack someone wants kept as it is.
    private static func isSuperseded(_ pack: String, by packed: Set<ObjectID>, in repository: Repository) -> Bool {
        guard !FileManager.default.fileExists(atPath: String(pack.dropLast(5)) + ".keep"),
            let objects = repository.objectIDs(inPack: pack)
        else { return false }
        return objects.isSubset(of: packed)
    }

    /// Deletes a pack with its index and companions (or a temporary file); returns how many files went.
    private static func removePack(_ path: String) -> Int {
        guard path.hasSuffix(".pack") else { return (try? FileManager.default.removeItem(atPath: path)) != nil ? 1 : 0 }
        let stem = String(path.dropLast(5))
        // The index goes last: a pack without its index is ignored, an index without its pack is an error.
        return [".pack", ".rev", ".bitmap", ".keep", ".idx"].reduce(0) { count, suffix in
            count + ((try? FileManager.default.removeItem(atPath: stem + suffix)) != nil ? 1 : 0)
        }
    }

    private static func removeEmptyObjectDirectories(_ objects: String) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: objects)) ?? [] where name.count == 2 {
            let path = objects + name
            if (try? FileManager.default.contentsOfDirectory(atPath: path))?.isEmpty == true { try? FileManager.default.removeItem(atPath: path) }
        }
    }
}
