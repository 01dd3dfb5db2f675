internal import CGitShim
internal import CLibgit2
import Foundation

/// What a local push sends: the commits its tips reach and the trees and blobs they bring that the other repository
/// lacks, each once, read from the store's packs a generation at a time.
///
/// A first push of 100,000 documents read 100,000 commits and 200,000 trees in the order of a depth-first walk, at
/// random in the packs, on one core of two: about half its time. Here the walk goes by generations (the tips, their
/// parents, …; a batch's root trees, the trees they name, …): this thread decides what a generation holds (what was not
/// seen, and what the other repository lacks, which only it asks libgit2), and the generation is read in the order the
/// packs hold it, a large one on two threads (`DividedPackReads`); what the packs cannot give (a loose object, one of
/// the scratch repository's, an entry that does not prove) is read here after, through libgit2.
final class PushWalk {
    typealias Commit = (commit: ObjectID, tree: ObjectID)

    private let repository: Repository
    private let held: HeldObjects
    private let reads: DividedPackReads
    private var entries: PackEntries { reads.entries }

    /// The commits found and not yet in a pack the other repository holds: those of the batch being filled, and those of
    /// every batch written out of its sight.
    private var unsent = Set<ObjectID>()

    /// A walk reading through `entries`, whose generations are placed and read `orderedAtOnce` ids at a time (a push's
    /// batch).
    init(repository: Repository, held: HeldObjects, entries: PackEntries, orderedAtOnce: Int) {
        (self.repository, self.held) = (repository, held)
        reads = DividedPackReads(entries, instrumentation: repository.instrumentation, orderedAtOnce: orderedAtOnce)
    }

    /// Walks the commits `tips` reach that the other repository lacks, each once, and hands them to `send` in the order
    /// found, `perBatch` at a time (the last batch fewer); returns how many were sent, and how many `isCounted` accepted
    /// by their message (heard on either thread).
    ///
    /// `send` writes its batch before the walk goes on (`batchWritten`): a first push's first generation, every
    /// document's head, goes out a batch at a time, where listing all of it first held a million commits with their
    /// trees (49 MB) and a set of each (50 MB) beside the batches. A commit is found once because the other repository
    /// holds, or this walk's unsent batch lists, each one found before: what `batchWritten` was told went elsewhere is
    /// remembered here instead.
    func sendCommits(
        reachableFrom tips: [ObjectID], perBatch: Int, counting isCounted: @Sendable (_ message: UnsafeRawBufferPointer) -> Bool,
        send: (_ batch: ArraySlice<Commit>) throws(GitError) -> Void
    ) throws(GitError) -> (sent: Int, counted: Int) {
        struct Found {
            var commits: [Commit] = []
            var counted = 0
            var parents: [ObjectID] = []
        }
        let perBatch = max(perBatch, 1)
        var found = Found()
        var sent = 0
        var generation = tips
        while !generation.isEmpty {
            // A batch's worth at a time: the batch fills to `perBatch` exactly, as if the whole walk were listed first.
            var start = 0
            while start < generation.count {
                let end = min(start + perBatch - found.commits.count, generation.count)
                var lacking = generation[start..<end].filter { unsent.insert($0).inserted }
                start = end
                held.removeHeld(from: &lacking)
                // Grown once for a large generation, and at least twice over otherwise: a long line of history is a
                // generation of one at a time.
                let needed = found.commits.count + lacking.count
                if needed > found.commits.capacity { found.commits.reserveCapacity(max(needed, 2 * found.commits.capacity)) }
                let unread = reads.read(lacking, ofType: GIT_OBJECT_COMMIT, remembering: true, into: Found()) { found, position, raw in
                    guard let parts = Repository.commitParts(raw) else { return false }
                    found.commits.append((lacking[position], parts.tree))
                    if raw.withUnsafeBytes({ isCounted(UnsafeRawBufferPointer(rebasing: $0[parts.message...])) }) { found.counted += 1 }
                    found.parents += parts.parents
                    return true
                } eachPart: { half in
                    found.commits += half.commits
                    found.counted += half.counted
                    found.parents += half.parents
                }
                for id in unread.map({ lacking[$0] }) {
                    found.parents += try repository.readCommitParts(of: id, from: entries) { tree, message in
                        found.commits.append((id, tree))
                        if isCounted(message) { found.counted += 1 }
                    }
                }
                if found.commits.count == perBatch {
                    try send(found.commits[...])
                    sent += found.commits.count
                    found.commits.removeAll(keepingCapacity: true)
                }
            }
            generation = found.parents
            found.parents = []
        }
        if !found.commits.isEmpty {
            try send(found.commits[...])
            sent += found.commits.count
        }
        return (sent, found.counted)
    }

    /// `commits` (which the other repository lacks), then each tree and blob their trees hold that it lacks, each once; a
    /// tree it has is not read, nor anything below it.
    func objectsLacking(broughtBy commits: ArraySlice<Commit>) throws(GitError) -> [ObjectID] {
        var objects = commits.map(\.commit)
        // A version brings a commit, two trees and a blob.
        var seen = Set<ObjectID>(minimumCapacity: commits.count * 4)
        seen.formUnion(objects)
        var generation = commits.map(\.tree).filter { seen.insert($0).inserted }
        held.removeHeld(from: &generation)
        objects += generation
        while !generation.isEmpty {
            var named: [TreeEntries.Entry] = []
            let unread = reads.read(generation, ofType: GIT_OBJECT_TREE, remembering: true, into: [TreeEntries.Entry]()) {
                named, _, raw in
                guard let parsed = TreeEntries.parse(raw) else { return false }
                named += parsed
                return true
            } eachPart: {
                named += $0
            }
            for position in unread { named += try repository.treeEntries(of: generation[position], readingFrom: entries) }
            let new = named.filter { seen.insert($0.id).inserted }
            generation = []
            for (entry, isLacking) in zip(new, held.lacks(each: new.map(\.id))) where isLacking {
                objects.append(entry.id)
                if entry.isTree { generation.append(entry.id) }
            }
        }
        return objects
    }

    /// After a batch's pack went into the other repository, at `path` (without its extension), holding `objects`: the
    /// look at it takes note, and both readers let go the pages they mapped. Nil when the pack went elsewhere.
    func batchWritten(_ objects: [ObjectID], inPack path: String?) {
        if let path {
            held.wrote(objects, inPack: path)
            // The repository holds them now: `held` finds them there.
            unsent.removeAll(keepingCapacity: true)
        }
        reads.releaseResidentPages()
    }
}
