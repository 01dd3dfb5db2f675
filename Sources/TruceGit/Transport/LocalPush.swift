internal import CLibgit2
import Foundation

/// A push to a bare repository on a local path, written by Truce: one pack of what the repository lacks, straight into
/// its `objects/pack`, then its references.
///
/// libgit2's local transport does the same work in the same process (and, as
/// it, runs no hook), but through its pack builder, which searches deltas
/// across every object, and its indexer, which writes each object twice and
/// maps it back in: 26 s for a replica of 100,000 documents, most of it
/// there. Here each object is copied as the store's packs deflated it
/// (`PackEntries` proves it), or deflated once.
extension Repository {
    /// What a local push changed: the commits it sent (newest first), and the objects written and the bytes of the
    /// packs that hold them.
    package struct LocalPushResult: Equatable {
        package var commits: [ObjectID] = []
        package var objects = 0
        package var bytes = 0
    }

    /// Sends the commits `tips` reach that the repository at `path` lacks, with the trees and blobs they need that it
    /// lacks, then sets each of `references` there: to its target, or deleted (as `deleteReferences` deletes) when
    /// the target is nil, whatever it pointed at before: a forced push.
    ///
    /// `objectsDirectory` is the object directory whose packs may hold the objects as they can be copied. The packs
    /// are fsynced and in place before the first reference moves, so a push killed at any point leaves the other
    /// repository whole: at worst packs no reference needs yet. `progress` hears the objects written and the
    /// bytes so far; once `cancellation` is set the push stops before the next batch of objects and before the
    /// references, failing with `GIT_EUSER` as libgit2's push does.
    ///
    /// The objects go in one pack per `commitsPerPack` commits, so that the push's memory follows that batch and not
    /// the store: each batch's pack is in place before the next batch looks at what the repository lacks.
    @discardableResult
    package func pushLocally(
        reachableFrom tips: [ObjectID], to path: String, setting references: [(name: String, target: ObjectID?)],
        copyingFrom objectsDirectory: String, commitsPerPack: Int = Repository.localPushCommitsPerPack,
        progress: ((TransferCounts) -> Void)? = nil, cancellation: Cancellation? = nil
    ) throws(GitError) -> LocalPushResult {
        let destination = try Repository.openBare(at: path, instrumentation: instrumentation)
        var odb: OpaquePointer?
        try check(git_repository_odb(&odb, destination.handle), "open object database of \(destination.path)")
        defer { git_odb_free(odb) }
        let entries = try PackEntries(objectsDirectory: objectsDirectory)
        var result = LocalPushResult()
        // A repository holds what every commit and tree it has reaches (git keeps that true: objects arrive in whole
        // packs, and prune keeps what a kept object reaches), so the walk stops at the first commit it has. A revision
        // walker hiding its refs held every commit of a million-document store in its own lists, a third of the push's
        // memory.
        var commits: [(commit: ObjectID, tree: ObjectID)] = []
        try forEachCommit(
            reachableFrom: tips, entering: { Self.lacks($0, in: odb) }, { commit, tree in commits.append((commit, tree)) })
        result.commits = commits.map(\.commit)
        for start in stride(from: 0, to: commits.count, by: max(commitsPerPack, 1)) {
            if cancellation?.isCancelled == true { throw Self.cancelledPush(path) }
            let batch = commits[start..<min(start + max(commitsPerPack, 1), commits.count)]
            let objects = try objectsLacking(in: odb, broughtBy: batch)
            guard !objects.isEmpty else { continue }
            let before = result
            try PackWriter(repository: self, into: destination.gitDirectory + "objects/pack/").write(
                objects, copyingFrom: entries, distinct: true, cancellation: cancellation,
                progress: { done, _, bytes in
                    (result.objects, result.bytes) = (before.objects + done, before.bytes + bytes)
                    progress?(TransferCounts(objects: result.objects, bytes: result.bytes))
                })
            // The next batch finds this pack's objects there, and sends none of them again.
            try check(git_odb_refresh(odb), "read the packs of \(destination.path)")
            entries.releaseResidentPages()
        }
        if cancellation?.isCancelled == true { throw Self.cancelledPush(path) }
        var deletions: [(name: String, target: ObjectID)] = []
        for reference in references {
            let current = try destination.reference(reference.name)
            if let target = reference.target {
                if current != target {
                    try destination.updateReference(reference.name, to: target, expecting: current, message: "push")
                }
            } else if let current {
                deletions.append((reference.name, current))
            }
        }
        // A hub from before manifests may have a head ref per document: their packed lines go in one rewrite.
        try destination.deleteReferences(deletions)
        return result
    }

    /// Whether `odb` lacks `id`, without a rescan of its pack directory on a miss (libgit2's default, and most objects
    /// of a first push miss).
    private static func lacks(_ id: ObjectID, in odb: OpaquePointer?) -> Bool {
        var oid = id.raw
        return git_odb_exists_ext(odb, &oid, UInt32(GIT_ODB_LOOKUP_NO_REFRESH.rawValue)) != 1
    }

    /// `commits` (which `odb` lacks), then each tree and blob their trees hold that it lacks, each once; a tree it has
    /// is not read, nor anything below it.
    private func objectsLacking(
        in odb: OpaquePointer?, broughtBy commits: ArraySlice<(commit: ObjectID, tree: ObjectID)>
    ) throws(GitError) -> [ObjectID] {
        var objects = commits.map(\.commit)
        var seen = Set(objects)
        func add(_ id: ObjectID) -> Bool {
            guard seen.insert(id).inserted, Self.lacks(id, in: odb) else { return false }
            objects.append(id)
            return true
        }
        for commit in commits {
            try walkTree(commit.tree, entering: add, blob: { _ = add($0) })
        }
        return objects
    }

    /// Commits whose objects go into one pack: as many documents as an import saves in one batch.
    package static let localPushCommitsPerPack = 1 << 17

    private static func cancelledPush(_ path: String) -> GitError {
        GitError(operation: "push to \(path)", code: GIT_EUSER.rawValue, errorClass: 0, message: "cancelled")
    }
}
