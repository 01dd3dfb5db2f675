import Foundation
internal import TruceGit
internal import TruceSaveLog

/// git's gc, done by hand (libgit2 has none): mark, repack, sweep.
extension StoreEngine {
    /// Prunes with grace period `expire`, stopping with `TruceError.cancelled` once `cancellation` is set, at each
    /// step before the new pack is written: nothing is deleted then, and what ran before only tidied.
    ///
    /// Run it on an engine of its own (`DocumentStore.withOwnEngine`): a repack takes long, and reads and saves meanwhile
    /// then do not wait behind it.
    func prune(expire: TimeInterval, progress: (@Sendable (String) -> Void)?, cancellation: Cancellation?) throws -> PruneReport {
        let now = Date()
        // A grace period reaching back before year 1 keeps everything, as `never` does; the seconds below would overflow.
        let cutoff = expire.isInfinite || expire > now.timeIntervalSince(.distantPast) ? Date.distantPast : now.addingTimeInterval(-expire)
        // git stores whole seconds: round up so that `--now` covers what was written this very second.
        let cutoffSeconds = Int64(cutoff.timeIntervalSince1970.rounded(.up))
        let lock = try PruneLock.acquire(in: gitDirectory)
        defer { lock.release() }
        try cancellation?.check()
        // Ref and reflog locks killed writers left: some sit on refs no later writer takes, and would block git gc;
        // `packed-refs.lock` too, which only a writer that publishes or drops packed heads would meet; and the
        // index lock files of packs libgit2 was writing (a sync's download, a repack), which no one takes again.
        repository.removeStaleLocks(under: "refs/")
        repository.removeStaleLocks(under: "logs/")
        repository.removeStaleLocks(under: "objects/pack/")
        StaleLocks.removeIfStale(gitDirectory + "packed-refs.lock")
        SaveLog.removeAbandonedCreations(of: gitDirectory + SaveLogOverlay.fileName, olderThan: StaleLocks.staleLockAge)
        // A store made before stores had a branch for HEAD gets it: `git fsck` then says nothing of an unborn branch.
        try StoreCreation.giveHeadABranch(in: repository)
        progress?("checking the journal")
        try recordMissingChanges()
        progress?("tidying heads")
        let (dropped, deletedReferences, headGroups) = try tidyHeads(droppingDeletionsOlderThan: cutoffSeconds)
        // Refs and reflog entries that go must be gone for good before the objects only they named go: a power loss
        // must not bring back a ref, or a reflog entry, naming an object that is no longer there.
        var rewritten = deletedReferences.flatMap { name in ["", "logs/"].map { gitDirectory + $0 + name } }
        progress?("checking conflict markers")
        try rebuildConflictMarkers(headGroups: headGroups)
        let referenceTargets = try repository.referenceTargets()
        // Nothing below reads references: the mapping of `packed-refs` (130 MB at a million heads) goes, and what the
        // journal check and the tidying freed goes back to the system before marking fills a set of every object.
        repository.packedReferencesCache = nil
        Libgit2.releaseFreedMemory()
        // The reflogs there are, including those whose reference a killed writer never created (git fsck reads their
        // entries too); a packed head has none, and gets none.
        let reflogs = repository.reflogNames().sorted()
        try cancellation?.check()
        var expired = 0
        if !reflogs.isEmpty { progress?("expiring reflogs") }
        for name in reflogs where !expire.isInfinite {
            try repository.withLockRetries(on: "logs/" + name) {
                let count = try repository.expireReflog(of: name, olderThan: cutoffSeconds)
                if count > 0 { rewritten.append(gitDirectory + "logs/" + name) }
                expired += count
            }
        }
        // Files are listed before marking: objects written after this point are never deleted.
        let files = repository.objectFiles()
        let bytesBefore = (files.loose + files.packs + files.temporary).reduce(0) { $0 + $1.size }
        try cancellation?.check()
        progress?("marking reachable objects")
        let tips = try repository.reflogIDs(of: reflogs).union(referenceTargets).filter { $0.bytes.contains { $0 != 0 } }
        var reachable = try repository.reachableObjects(from: tips)
        try cancellation?.check()
        let plan = RepackPlan.make(packs: files.packs.map(\.path), reachable: reachable)
        var packs = Set(plan.kept)
        // What goes once the new pack is in place is decided now, and the set of every reachable object goes before
        // the pack builder fills its own memory: together they were the peak of a prune of a million documents.
        let looseToRemove = files.loose.filter { reachable.contains($0.id!) || $0.modified < cutoff }
        let superseded = Set(
            files.packs.filter { !packs.contains($0.path) && $0.modified >= cutoff && Self.holdsOnly(reachable, pack: $0.path, in: repository) }
                .map(\.path))
        let packedObjects = reachable.count
        reachable = []
        if !plan.toWrite.isEmpty {
            progress?("packing \(plan.toWrite.count) objects")
            let written = try repository.writePack(of: plan.toWrite) { done, total in
                progress?("packing objects: \(done)/\(total)")
            }
            packs.insert(gitDirectory + "objects/pack/" + written + ".pack")
        }
        DurableFiles.syncRemovalsOrRewrites(of: Array(Set(rewritten)), under: gitDirectory)
        progress?("removing what nothing needs")
        var removed = 0
        for file in looseToRemove where (try? FileManager.default.removeItem(atPath: file.path)) != nil { removed += 1 }
        for file in files.packs where !packs.contains(file.path) {
            guard file.modified < cutoff || (superseded.contains(file.path) && !Self.isMarkedKept(file.path)) else { continue }
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
            droppedDocuments: dropped, expiredReflogEntries: expired, packedObjects: packedObjects, removedFiles: removed,
            bytesBefore: bytesBefore, bytesAfter: (after.loose + after.packs + after.temporary).reduce(0) { $0 + $1.size })
    }

    /// Drops the head refs of documents whose only head is a deletion written before `cutoff` (seconds since 1970),
    /// and every head ref that another head of its document descends from; returns the documents dropped, the refs
    /// deleted and the head refs left, by document.
    ///
    /// A save leaves the packed head it supersedes in place (removing one line
    /// rewrites the whole file) and readers skip it; here they all go in one
    /// rewrite.
    private func tidyHeads(
        droppingDeletionsOlderThan cutoff: Int64
    ) throws -> (dropped: [DocumentKey], deleted: [String], left: [[(name: String, target: ObjectID)]]) {
        var dropped: [DocumentKey] = []
        var leaving: [(name: String, target: ObjectID)] = []
        let groups = try headReferencesByDocument()
        for references in groups {
            if references.count == 1 {
                // One head ref (most documents): its version is the current one, read once.
                let commit = try repository.readCommit(references[0].target)
                guard let message = VersionMessage(parsing: commit.message), let key = try? DocumentKey(message.key) else { continue }
                // A save holds its document (a remote's save that does not is only kept, never lost): only other
                // kinds have their tree read, which was a third of this step.
                if commit.committer.time < cutoff, message.kind != .save, try repository.entry(at: key.rawValue, inTree: commit.tree) == nil {
                    leaving += references
                    dropped.append(key)
                }
                continue
            }
            guard let key = try documentKey(of: references[0].target) else { continue }
            // The group is the document's head references as listed: no need to look them up again.
            let versions = try documentVersions(of: key, amongCandidates: references.map(\.target))
            if versions.state == .deleted, let current = versions.current, try repository.readCommit(current.id.objectID).committer.time < cutoff {
                leaving += references
                dropped.append(key)
            } else {
                let heads = Set(versions.allHeads.map(\.id.objectID))
                leaving += references.filter { !heads.contains($0.target) }
            }
        }
        try repository.withLockRetries(on: "packed-refs") {
            try repository.deleteReferences(leaving)
        }
        // What stays of each group, for the marker check after this step.
        let gone = Set(leaving.map(\.name))
        let left = gone.isEmpty ? groups : groups.map { $0.filter { !gone.contains($0.name) } }
        return (dropped.sorted(), leaving.map(\.name), left)
    }

    /// Journals any head history a crash kept out of the journal, so `changes` misses nothing for long.
    private func recordMissingChanges() throws {
        let journal = ChangeJournal(repository: repository)
        var journaled = Set<VersionID>()
        var entry = try repository.reference(ChangeJournal.reference)
        while let current = entry {
            let commit = try repository.readCommit(current)
            for recorded in try journal.recorded(in: commit) ?? [] { journaled.insert(recorded.change.version) }
            entry = commit.parents.first
        }
        let heads = try repository.references(under: ReferenceLayout.headsRoot).map(\.target)
        var unjournaled = Set<ObjectID>()
        try repository.forEachCommit(reachableFrom: heads) { commit, _ in
            if !journaled.contains(VersionID(commit)) { unjournaled.insert(commit) }
        }
        var keys: [ObjectID: DocumentKey] = [:]
        for id in unjournaled { keys[id] = try documentKey(of: id) }
        // Almost always none: only then is the history walked in order, so that the journal lists them as they came.
        guard !keys.isEmpty else { return }
        var missing: [Change] = []
        for id in try repository.walk(from: heads, oldestFirst: true) {
            guard let key = keys[id] else { continue }
            missing.append(Change(recording: try readVersion(VersionID(id), of: key)))
        }
        try journal.append(missing)
    }

    /// How long a temporary file libgit2 writes (a fetched pack, a loose object) may go untouched before prune takes its
    /// writer for dead, whatever the grace period: a live writer touches it every moment, and nothing refers to it.
    static let temporaryFileAge: TimeInterval = 3600

    /// True when every object of `pack` is reachable, and so in a pack prune keeps or is about to write (and fsync): it
    /// can go as soon as that pack is in place, unless `isMarkedKept`.
    ///
    /// A process that has the old pack open keeps reading it after the
    /// unlink; one that finds it gone before opening it (libgit2 or git)
    /// looks again, rescans the pack directory and finds the objects in the
    /// new pack.
    private static func holdsOnly(_ packed: Set<ObjectID>, pack: String, in repository: Repository) -> Bool {
        guard let objects = repository.objectIDs(inPack: pack) else { return false }
        return objects.isSubset(of: packed)
    }

    /// Whether a `.keep` file marks `pack` as one someone wants kept as it is.
    private static func isMarkedKept(_ pack: String) -> Bool {
        FileManager.default.fileExists(atPath: String(pack.dropLast(5)) + ".keep")
    }

    /// Deletes a pack with its index and companions (or a temporary file); returns how many files went.
    private static func removePack(_ path: String) -> Int {
        guard path.hasSuffix(".pack") else { return (try? FileManager.default.removeItem(atPath: path)) != nil ? 1 : 0 }
        let stem = String(path.dropLast(5))
        // The index goes last: readers find a pack by its index and skip one whose pack is gone. A prune killed before
        // the index went leaves it and its companions, which the next takes as leftovers (`Repository.packFiles`).
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

extension StoreAccess {
    /// Prunes on an engine of its own (see `StoreEngine.prune`): a repack takes long, and reads and saves meanwhile do
    /// not wait behind it.
    func prune(expire: TimeInterval, progress: (@Sendable (String) -> Void)?, cancellation: Cancellation?) throws(TruceError) -> PruneReport {
        try withOwnEngine { try $0.prune(expire: expire, progress: progress, cancellation: cancellation) }
    }
}
