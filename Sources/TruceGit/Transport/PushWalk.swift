internal import CGitShim
internal import CLibgit2
import Foundation

/// What a local push sends: the commits its tips reach and the trees and blobs they bring that the other repository
/// lacks, each once, read from the store's packs a generation at a time, in the order the packs hold them, on two
/// threads once a generation is large enough.
///
/// A first push of 100,000 documents read 100,000 commits and 200,000 trees in the order of a depth-first walk, at
/// random in the packs, on one core of two: about half its time. Here the walk goes by generations (the tips, their
/// parents, …; a batch's root trees, the trees they name, …): this thread decides what a generation holds (what was not
/// seen, and what the other repository lacks, which libgit2 tells), and the generation is read in pack order, its first
/// half here and its second on another thread, each through its own `PackEntries` of the same mappings. The halves'
/// reads are then two runs through the packs, whose pages go in few releases. The second thread reads only from the
/// packs; what it cannot read there (a loose object, one of the scratch repository's, an entry that does not prove)
/// this thread reads through libgit2 once both are done, as a libgit2 handle serves one thread at a time. The proofs
/// the second made go to the copy (`PackEntries.takeRemembered`).
final class PushWalk {
    typealias Commit = (commit: ObjectID, tree: ObjectID)

    private let repository: Repository
    private let held: HeldObjects
    private let entries: PackEntries
    /// The fewest objects of a generation whose reads are divided: below it a second thread costs more than it saves;
    /// never on one core.
    private let fewestDivided: Int
    /// The most ids of a generation placed and read in pack order at once.
    private let orderedAtOnce: Int
    /// The second thread's reads of the packs, made when the walk first divides.
    private var second: PackEntries?

    /// A walk reading through `entries`, whose generations are placed and read `orderedAtOnce` ids at a time (a push's
    /// batch: a generation of a million heads, placed and ordered at once, held about 150 MB beside them).
    init(repository: Repository, held: HeldObjects, entries: PackEntries, orderedAtOnce: Int) {
        (self.repository, self.held, self.entries, self.orderedAtOnce) = (repository, held, entries, max(orderedAtOnce, 1))
        fewestDivided = ProcessInfo.processInfo.activeProcessorCount > 1 ? repository.instrumentation.fewestDividedOnTwoThreads : .max
    }

    /// The commits `tips` reach that the other repository lacks, with their trees, each once, and how many of them
    /// `isCounted` accepted by their message (heard on either thread).
    func commits(
        reachableFrom tips: [ObjectID], counting isCounted: @Sendable (_ message: UnsafeRawBufferPointer) -> Bool
    ) throws(GitError) -> (commits: [Commit], counted: Int) {
        struct Found {
            var commits: [Commit] = []
            var counted = 0
            var parents: [ObjectID] = []
        }
        var found = Found()
        var seen = Set<ObjectID>()
        var generation = tips
        while !generation.isEmpty {
            // Grown once for a large generation, to what it brings (doubling as it went held twice a million commits'
            // worth), and at least twice over otherwise: a long line of history is a generation of one at a time.
            seen.reserveCapacity(seen.count + generation.count)
            let lacking = generation.filter { seen.insert($0).inserted && !held.contains($0) }
            let needed = found.commits.count + lacking.count
            if needed > found.commits.capacity { found.commits.reserveCapacity(max(needed, 2 * found.commits.capacity)) }
            let (halves, unread) = read(lacking, ofType: GIT_OBJECT_COMMIT, into: Found()) { found, id, raw in
                guard let parts = Repository.commitParts(raw) else { return false }
                found.commits.append((id, parts.tree))
                if raw.withUnsafeBytes({ isCounted(UnsafeRawBufferPointer(rebasing: $0[parts.message...])) }) { found.counted += 1 }
                found.parents += parts.parents
                return true
            }
            for half in halves {
                found.commits += half.commits
                found.counted += half.counted
                found.parents += half.parents
            }
            for id in unread {
                found.parents += try repository.readCommitParts(of: id, from: entries) { tree, message in
                    found.commits.append((id, tree))
                    if isCounted(message) { found.counted += 1 }
                }
            }
            generation = found.parents.filter { !seen.contains($0) }
            found.parents = []
        }
        return (found.commits, found.counted)
    }

    /// `commits` (which the other repository lacks), then each tree and blob their trees hold that it lacks, each once; a
    /// tree it has is not read, nor anything below it.
    func objectsLacking(broughtBy commits: ArraySlice<Commit>) throws(GitError) -> [ObjectID] {
        var objects = commits.map(\.commit)
        // A version brings a commit, two trees and a blob.
        var seen = Set<ObjectID>(minimumCapacity: commits.count * 4)
        seen.formUnion(objects)
        func lacks(_ id: ObjectID) -> Bool { seen.insert(id).inserted && !held.contains(id) }
        var generation = commits.map(\.tree).filter(lacks)
        objects += generation
        while !generation.isEmpty {
            let (halves, unread) = read(generation, ofType: GIT_OBJECT_TREE, into: [TreeEntries.Entry]()) { named, _, raw in
                guard let parsed = TreeEntries.parse(raw) else { return false }
                named += parsed
                return true
            }
            var named = halves.flatMap { $0 }
            for id in unread { named += try repository.treeEntries(of: id, readingFrom: entries) }
            generation = []
            for entry in named where lacks(entry.id) {
                objects.append(entry.id)
                if entry.isTree { generation.append(entry.id) }
            }
        }
        return objects
    }

    /// Reads each of `ids` of `type` from the packs, in the order they hold them, and hands its bytes to `take`, which
    /// adds what it needs to its half's `Part` (false: they do not parse). With enough of them, the second half of
    /// that order is read on another thread, into a `Part` of its own; `take` must hold nothing but its arguments.
    /// Returns the parts, this thread's first, and the ids no pack here gave (or whose bytes did not parse or are of
    /// another type), for the caller to read through libgit2, which fails or passes each as before.
    private func read<Part>(
        _ ids: [ObjectID], ofType type: git_object_t, into empty: Part,
        _ take: (_ part: inout Part, _ id: ObjectID, _ raw: [UInt8]) -> Bool
    ) -> (parts: [Part], unread: [ObjectID]) {
        guard ids.count <= orderedAtOnce else {
            var result: (parts: [Part], unread: [ObjectID]) = ([], [])
            for start in stride(from: 0, to: ids.count, by: orderedAtOnce) {
                let run = read(Array(ids[start..<min(start + orderedAtOnce, ids.count)]), ofType: type, into: empty, take)
                result.parts += run.parts
                result.unread += run.unread
            }
            return result
        }
        let ordered = entries.inPackOrder(ids)
        guard ordered.count >= fewestDivided, let second = secondReader() else {
            let half = PushWalkHalf(empty)
            half.read(ordered[...], ofType: type, through: entries, take)
            return ([half.part], half.unread)
        }
        let middle = ordered.count / 2
        return withoutActuallyEscaping(take) { take in
            // Each thread reads through its own `PackEntries`, into its own half: they share only the packs' mappings.
            nonisolated(unsafe) let halves = [PushWalkHalf(empty), PushWalkHalf(empty)]
            nonisolated(unsafe) let (readers, runs, take) = ([entries, second], [ordered[..<middle], ordered[middle...]], take)
            let instrumentation = repository.instrumentation
            DispatchQueue.concurrentPerform(iterations: 2) { position in
                halves[position].read(runs[position], ofType: type, through: readers[position], take)
                if position == 1 { instrumentation.countObjectsReadOnASecondThread(runs[1].count - halves[1].unread.count) }
            }
            entries.takeRemembered(from: second)
            return (halves.map(\.part), halves[0].unread + halves[1].unread)
        }
    }

    /// After a batch's pack went into the other repository: the look at it reads its packs again, and both readers
    /// let go the pages they mapped.
    func batchWritten() throws(GitError) {
        try held.readPacksAgain()
        entries.releaseResidentPages()
        second?.releaseResidentPages()
    }

    /// The second thread's reader of the packs, made the first time the walk divides; nil when it cannot be made (the
    /// walk then stays on this thread). The two share the packs' resident budget.
    private func secondReader() -> PackEntries? {
        if second == nil {
            entries.residentShare = PackEntries.residentBudget / 2
            second = try? entries.forAnotherThread()
            if second == nil { entries.residentShare = PackEntries.residentBudget }
        }
        return second
    }
}

/// What one thread of a `PushWalk` generation read: what its `take` kept, and the ids it could not read from the packs.
private final class PushWalkHalf<Part> {
    var part: Part
    var unread: [ObjectID] = []

    init(_ part: Part) { self.part = part }

    /// Reads `run` through `entries`, in its order, handing each object of `type` to `take`.
    func read(
        _ run: ArraySlice<(id: ObjectID, place: PackEntries.Place?)>, ofType type: git_object_t, through entries: PackEntries,
        _ take: (_ part: inout Part, _ id: ObjectID, _ raw: [UInt8]) -> Bool
    ) {
        for (id, place) in run {
            if let found = place.flatMap({ entries.read(id, at: $0, remembering: true) }), found.type == type, take(&part, id, found.bytes) {
                continue
            }
            unread.append(id)
        }
    }
}
