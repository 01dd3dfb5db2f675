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
        /// How many of `commits` the push's `counting` accepted.
        package var counted = 0
        package var objects = 0
        package var bytes = 0
        /// The packs written (`pack-<hash>`), in the pack directory the push wrote to.
        package var packs: [String] = []
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
    ///
    /// With `packDirectory`, the packs go there instead (with a trailing slash), out of the repository's sight: what an
    /// encrypted hub's cache does, which takes objects only from sealed entries. A later batch may then repeat an
    /// object an earlier one wrote.
    ///
    /// A reference named in `expected` moves only from that value (nil: only if it does not exist), compare-and-swap, as
    /// git's receive-pack moves a ref only from the value it advertised; the others from whatever they hold.
    ///
    /// `counting` hears the message of each commit sent, as the walk reads it: the result counts those it accepts.
    @discardableResult
    package func pushLocally(
        reachableFrom tips: [ObjectID], to path: String, setting references: [(name: String, target: ObjectID?)],
        expecting expected: [String: ObjectID?] = [:], copyingFrom objectsDirectory: String, packDirectory: String? = nil,
        commitsPerPack: Int = Repository.localPushCommitsPerPack,
        progress: ((TransferCounts) -> Void)? = nil, cancellation: Cancellation? = nil,
        counting isCounted: (_ message: UnsafeRawBufferPointer) -> Bool = { _ in false }
    ) throws(GitError) -> LocalPushResult {
        let destination = try Repository.openBare(at: path, instrumentation: instrumentation)
        // A ref that moved already fails the push before any pack is written, as libgit2's does before sending one.
        for (name, value) in expected where try destination.reference(name) != value {
            throw GitError(operation: "push to \(path)", code: GIT_EMODIFIED.rawValue, errorClass: 0, message: "\(name) moved since it was read")
        }
        let held = try HeldObjects(in: destination.gitDirectory + "objects")
        // This store's own packs: an entry's CRC proves it, as git proves one it reuses.
        let entries = try PackEntries(objectsDirectory: objectsDirectory, provenBy: .indexCRC)
        var result = LocalPushResult()
        // A repository holds what every commit and tree it has reaches (git keeps that true: objects arrive in whole
        // packs, and prune keeps what a kept object reaches), so the walk stops at the first commit it has. A revision
        // walker hiding its refs held every commit of a million-document store in its own lists, a third of the push's
        // memory.
        var commits: [(commit: ObjectID, tree: ObjectID)] = []
        // Each commit and tree is read from this store's packs, which remember where for its copy: libgit2's reads
        // found each once and the copy once more.
        try forEachCommit(
            reachableFrom: tips, entering: { !held.contains($0) }, readingFrom: entries,
            { commit, tree, message in
                commits.append((commit, tree))
                if isCounted(message) { result.counted += 1 }
            })
        result.commits = commits.map(\.commit)
        for start in stride(from: 0, to: commits.count, by: max(commitsPerPack, 1)) {
            if cancellation?.isCancelled == true { throw Self.cancelledPush(path) }
            let batch = commits[start..<min(start + max(commitsPerPack, 1), commits.count)]
            let objects = try objectsLacking(in: held, broughtBy: batch, readingFrom: entries)
            guard !objects.isEmpty else { continue }
            let before = result
            let pack = try PackWriter(repository: self, into: packDirectory ?? destination.gitDirectory + "objects/pack/").write(
                objects, copyingFrom: entries, distinct: true, cancellation: cancellation,
                progress: { done, _, bytes in
                    (result.objects, result.bytes) = (before.objects + done, before.bytes + bytes)
                    progress?(TransferCounts(objects: result.objects, bytes: result.bytes))
                })
            result.packs += pack.map { [$0] } ?? []
            // The next batch finds this pack's objects there, and sends none of them again.
            try held.readPacksAgain()
            entries.releaseResidentPages()
        }
        if cancellation?.isCancelled == true { throw Self.cancelledPush(path) }
        var deletions: [(name: String, target: ObjectID)] = []
        for reference in references {
            let current = try destination.reference(reference.name)
            if let target = reference.target {
                if let pinned = expected[reference.name] {
                    do {
                        try destination.updateReference(reference.name, to: target, expecting: pinned, message: "push")
                    } catch  where error.isLocked {
                        // Another push holds it this moment: it moves from the value expected, if not yet.
                        throw GitError(
                            operation: "push to \(path)", code: GIT_EMODIFIED.rawValue, errorClass: 0, message: "\(reference.name) is being moved")
                    }
                } else if current != target {
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

    /// `commits` (which the repository lacks), then each tree and blob their trees hold that it lacks, each once; a
    /// tree it has is not read, nor anything below it.
    private func objectsLacking(
        in held: HeldObjects, broughtBy commits: ArraySlice<(commit: ObjectID, tree: ObjectID)>, readingFrom entries: PackEntries
    ) throws(GitError) -> [ObjectID] {
        var objects = commits.map(\.commit)
        var seen = Set(objects)
        func add(_ id: ObjectID) -> Bool {
            guard seen.insert(id).inserted, !held.contains(id) else { return false }
            objects.append(id)
            return true
        }
        for commit in commits {
            try walkTree(commit.tree, readingFrom: entries, entering: add, blob: { _ = add($0) })
        }
        return objects
    }

    /// Commits whose objects go into one pack: as many documents as an import saves in one batch.
    package static let localPushCommitsPerPack = 1 << 17

    private static func cancelledPush(_ path: String) -> GitError {
        GitError(operation: "push to \(path)", code: GIT_EUSER.rawValue, errorClass: 0, message: "cancelled")
    }
}

/// The objects a repository that a local push goes to holds: its packs, and its loose objects as listed once.
///
/// libgit2's lookup looks for a loose file of every object its packs lack, one `access` call each, and most of a
/// first push's objects are lacking: a tenth of a first push's time went there (`LocalPushTests`). A loose object
/// written there after the listing is only sent once more.
private final class HeldObjects {
    private var packs: OpaquePointer?
    private let loose: Set<ObjectID>

    init(in objectsDirectory: String) throws(GitError) {
        try check(git_odb_new(&packs), "open the packs of \(objectsDirectory)")
        var backend: UnsafeMutablePointer<git_odb_backend>?
        let opened = git_odb_backend_pack(&backend, objectsDirectory)
        let added = opened == 0 ? git_odb_add_backend(packs, backend, 1) : opened
        if opened == 0, added != 0 { backend?.pointee.free(backend) }
        guard added == 0 else {
            git_odb_free(packs)
            throw GitError.last("open the packs of \(objectsDirectory)", code: added)
        }
        loose = Repository.looseObjectIDs(in: objectsDirectory + "/")
    }

    deinit { git_odb_free(packs) }

    /// Whether the repository holds `id`: listed loose, or in a pack as last read (no rescan of the pack directory
    /// on a miss, libgit2's default, which most objects of a first push would make).
    func contains(_ id: ObjectID) -> Bool {
        if loose.contains(id) { return true }
        var oid = id.raw
        return git_odb_exists_ext(packs, &oid, UInt32(GIT_ODB_LOOKUP_NO_REFRESH.rawValue)) == 1
    }

    /// Reads the pack directory again: after a pack was written there.
    func readPacksAgain() throws(GitError) {
        try check(git_odb_refresh(packs), "read the packs again")
    }
}
