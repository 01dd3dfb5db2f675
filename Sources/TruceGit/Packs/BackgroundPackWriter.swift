import Foundation

/// A pack of objects held in memory, written on another thread while the caller goes on making the next ones: how an
/// `ObjectStaging` spills.
///
/// An import made a spill's objects, then deflated and wrote them while
/// making nothing, and its publishing and listing left the second core idle;
/// now each spill is written beside the staging of the next (deflated on
/// every core, as any big pack is). At most one write is under way: `start`
/// waits for the one before, so memory holds at most two spills. What a
/// write failed with is thrown by the next `start` or `finished()`, and a
/// staging's `flush` calls that before anything is published.
///
/// One thread at a time touches `failure` and `writing`: the caller's between `finished()` and `start`, the queue's
/// (`failure` only) from `start` until `finished()` returns.
final class BackgroundPackWriter: @unchecked Sendable {
    private let queue = DispatchQueue(label: "truce.background-pack")
    private let group = DispatchGroup()
    private var failure: GitError?
    /// The objects of the write under way, for readers of what is not yet in a pack's index.
    private(set) var writing: [ObjectID: RawObject] = [:]

    /// Writes `ids` from `known` as one pack into `packDirectory` (with a trailing slash) on the queue, once the write
    /// before has finished; throws what that one failed with.
    func start(
        _ ids: [ObjectID], known: [ObjectID: RawObject], into packDirectory: String, compression: PackCompression, instrumentation: Instrumentation
    ) throws(GitError) {
        try finished()
        writing = known
        queue.async(group: group) { [self] in
            instrumentation.willWriteSpill()
            do throws(GitError) {
                try PackWriter(heldObjectsInto: packDirectory).write(ids, known: known, compression: compression, distinct: true)
            } catch {
                failure = error
            }
        }
    }

    /// Waits for the write under way, if any; throws what it failed with. Once it returns, that pack is installed.
    func finished() throws(GitError) {
        group.wait()
        writing = [:]
        if let failure {
            self.failure = nil
            throw failure
        }
    }
}
