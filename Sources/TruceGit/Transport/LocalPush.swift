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
    /// What a local push changed: how many commits it sent, and the objects written and the bytes of the packs that hold
    /// them.
    package struct LocalPushResult: Equatable {
        /// Counted, not listed: a first push of a million documents held their ids (24 MB) for nothing else.
        package var commits = 0
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
    /// `counting` hears the message of each commit sent, as the walk reads it (on either of its threads, `PushWalk`): the
    /// result counts those it accepts.
    @discardableResult
    package func pushLocally(
        reachableFrom tips: [ObjectID], to path: String, setting references: [(name: String, target: ObjectID?)],
        expecting expected: [String: ObjectID?] = [:], copyingFrom objectsDirectory: String, packDirectory: String? = nil,
        commitsPerPack: Int = Repository.localPushCommitsPerPack,
        progress: ((TransferCounts) -> Void)? = nil, cancellation: Cancellation? = nil,
        counting isCounted: @Sendable (_ message: UnsafeRawBufferPointer) -> Bool = { _ in false }
    ) throws(GitError) -> LocalPushResult {
        let destination = try Repository.openBare(at: path, instrumentation: instrumentation)
        // A ref that moved already fails the push before any pack is written, as libgit2's does before sending one.
        for (name, value) in expected where try destination.reference(name) != value {
            throw GitError(operation: "push to \(path)", code: GIT_EMODIFIED.rawValue, errorClass: 0, message: "\(name) moved since it was read")
        }
        let held = try HeldObjects(in: destination.gitDirectory + "objects", instrumentation: instrumentation)
        // This store's own packs: an entry's CRC proves it, as git proves one it reuses.
        let entries = try PackEntries(objectsDirectory: objectsDirectory, provenBy: .indexCRC)
        var result = LocalPushResult()
        // A repository holds what every commit and tree it has reaches (git keeps that true: objects arrive in whole
        // packs, and prune keeps what a kept object reaches), so the walk stops at the first commit it has. A revision
        // walker hiding its refs held every commit of a million-document store in its own lists, a third of the push's
        // memory. Each commit and tree is read from this store's packs, which remember where for its copy: libgit2's
        // reads found each once and the copy once more.
        let walk = PushWalk(repository: self, held: held, entries: entries, orderedAtOnce: commitsPerPack)
        let directory = packDirectory ?? destination.gitDirectory + "objects/pack/"
        let walked = try walk.sendCommits(reachableFrom: tips, perBatch: commitsPerPack, counting: isCounted) {
            batch throws(GitError) in
            if cancellation?.isCancelled == true { throw Self.cancelledPush(path) }
            let objects = try walk.objectsLacking(broughtBy: batch)
            let before = result
            let pack = try PackWriter(repository: self, into: directory).write(
                objects, copyingFrom: entries, distinct: true, cancellation: cancellation,
                progress: { done, _, bytes in
                    (result.objects, result.bytes) = (before.objects + done, before.bytes + bytes)
                    progress?(TransferCounts(objects: result.objects, bytes: result.bytes))
                })
            result.packs += pack.map { [$0] } ?? []
            // The next batch finds this pack's objects there, and sends none of them again; a pack out of the
            // repository's sight (`packDirectory`) is not looked in.
            walk.batchWritten(objects, inPack: packDirectory == nil ? pack.map { directory + $0 } : nil)
        }
        (result.commits, result.counted) = walked
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

    /// Commits whose objects go into one pack: as many documents as an import saves in one batch.
    package static let localPushCommitsPerPack = 1 << 17

    private static func cancelledPush(_ path: String) -> GitError {
        GitError(operation: "push to \(path)", code: GIT_EUSER.rawValue, errorClass: 0, message: "cancelled")
    }
}
