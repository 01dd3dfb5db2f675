internal import CGitShim
internal import CLibgit2
import Foundation

/// Reads of many objects from a repository's packs, in the order the packs hold them, the second half of a large run
/// on a second thread: a local push's walk (`PushWalk`) and a first manifest's dates (`committerTimes`).
///
/// In pack order each thread reads one run of the packs and lets its pages go in long runs. Divided in any other
/// order the second thread gained nothing on this project's machine: both read at random, and each `madvise` of a
/// scattered 64 KB chunk cost a TLB shootdown of the other core. The second thread reads through its own `PackEntries`
/// of the same mappings (`forAnotherThread`) and nothing of libgit2's, whose handles serve one thread at a time: what
/// it cannot read there is handed back for the caller to read through libgit2. Its proofs go to this thread's reader,
/// whose copy then takes them (`PackEntries.takeRemembered`).
final class DividedPackReads {
    /// This thread's reader.
    let entries: PackEntries
    private let instrumentation: Instrumentation
    /// The fewest objects of a run that are divided: below it a second thread costs more than it saves; never on
    /// one core.
    private let fewestDivided: Int
    /// The most objects placed and ordered at once: a million, placed at once, held about 150 MB beside them.
    private let orderedAtOnce: Int
    /// The second thread's reader, made the first time a run is divided.
    private var second: PackEntries?
    /// How that reader is made.
    private let makeSecond: () -> PackEntries?

    /// Reads through `entries` here and, for a divided run, through the reader `makeSecond` gives (by default one of
    /// `entries` made for it) on another thread, asked for only when a run is divided: making one halves what the
    /// readers may keep mapped.
    init(
        _ entries: PackEntries, makingSecondWith makeSecond: (() -> PackEntries?)? = nil, instrumentation: Instrumentation,
        orderedAtOnce: Int
    ) {
        (self.entries, self.instrumentation, self.orderedAtOnce) = (entries, instrumentation, max(orderedAtOnce, 1))
        self.makeSecond = makeSecond ?? { try? entries.forAnotherThread() }
        fewestDivided = ProcessInfo.processInfo.activeProcessorCount > 1 ? instrumentation.fewestDividedOnTwoThreads : .max
    }

    /// Reads each of `ids` of `type` from the packs, `orderedAtOnce` at a time, each run in the order the packs hold
    /// it, and hands its bytes and its position in `ids` to `take`, which adds what it needs to its thread's `Part`
    /// (false: the bytes do not parse). `take` may run on the second thread: it must read nothing but its arguments
    /// and values that do not change. Returns the parts, this thread's first in each run, and the positions of the ids
    /// no pack here gave whole (or whose bytes were of another type or did not parse), for the caller to read through
    /// libgit2, which fails or passes each as before. With `remembering`, what is proven is kept for a copy.
    func read<Part>(
        _ ids: [ObjectID], ofType type: git_object_t, remembering: Bool, into empty: Part,
        _ take: (_ part: inout Part, _ position: Int, _ raw: [UInt8]) -> Bool
    ) -> (parts: [Part], unread: [Int]) {
        var parts: [Part] = []
        let unread = read(ids, ofType: type, remembering: remembering, into: empty, take, eachPart: { parts.append($0) })
        return (parts, unread)
    }

    /// `read(_:ofType:remembering:into:_:)`, handing each part to `eachPart` as its run ends, in the same order, and
    /// returning the positions unread: the caller folds a run's parts into its own before the next run's are made (a
    /// first push's walk held all its runs' parts beside what it folded them into, 50 MB for a million commits).
    func read<Part>(
        _ ids: [ObjectID], ofType type: git_object_t, remembering: Bool, into empty: Part,
        _ take: (_ part: inout Part, _ position: Int, _ raw: [UInt8]) -> Bool, eachPart: (consuming Part) -> Void
    ) -> [Int] {
        var unread: [Int] = []
        for start in stride(from: 0, to: ids.count, by: orderedAtOnce) {
            let run = read(ids[start..<min(start + orderedAtOnce, ids.count)], ofType: type, remembering: remembering, into: empty, take)
            for part in run.parts { eachPart(part) }
            unread += run.unread
        }
        return unread
    }

    private func read<Part>(
        _ ids: ArraySlice<ObjectID>, ofType type: git_object_t, remembering: Bool, into empty: Part,
        _ take: (_ part: inout Part, _ position: Int, _ raw: [UInt8]) -> Bool
    ) -> (parts: [Part], unread: [Int]) {
        let ordered = entries.inPackOrder(ids)
        guard ordered.count >= fewestDivided, let second = secondReader() else {
            let half = Half(empty)
            half.read(ordered[...], of: ids, ofType: type, remembering: remembering, through: entries, take)
            return ([half.part], half.unread)
        }
        let middle = ordered.count / 2
        return withoutActuallyEscaping(take) { take in
            // Each thread reads through its own `PackEntries`, into its own half: they share only the packs' mappings.
            nonisolated(unsafe) let halves = [Half(empty), Half(empty)]
            nonisolated(unsafe) let (readers, runs, take) = ([entries, second], [ordered[..<middle], ordered[middle...]], take)
            let instrumentation = instrumentation
            DispatchQueue.concurrentPerform(iterations: 2) { position in
                halves[position].read(runs[position], of: ids, ofType: type, remembering: remembering, through: readers[position], take)
                if position == 1 { instrumentation.countObjectsReadOnASecondThread(runs[1].count - halves[1].unread.count) }
            }
            entries.takeRemembered(from: second)
            return (halves.map(\.part), halves[0].unread + halves[1].unread)
        }
    }

    /// Lets both readers' mapped pages go (`PackEntries.releaseResidentPages`).
    func releaseResidentPages() {
        entries.releaseResidentPages()
        second?.releaseResidentPages()
    }

    /// The second thread's reader, made the first time a run is divided; nil when it cannot be made (the reads then
    /// stay on this thread). The two share the packs' resident budget (`forAnotherThread`).
    private func secondReader() -> PackEntries? {
        if second == nil { second = makeSecond() }
        return second
    }

    /// What one thread of a run read: what its `take` kept, and the positions it could not read from the packs.
    private final class Half<Part> {
        var part: Part
        var unread: [Int] = []

        init(_ part: Part) { self.part = part }

        /// Reads `run` (positions in `ids`, with their places) through `entries`, in its order, handing each object of
        /// `type` to `take`.
        func read(
            _ run: ArraySlice<(position: Int, place: PackEntries.Place?)>, of ids: ArraySlice<ObjectID>, ofType type: git_object_t,
            remembering: Bool, through entries: PackEntries, _ take: (_ part: inout Part, _ position: Int, _ raw: [UInt8]) -> Bool
        ) {
            for (position, place) in run {
                if let found = place.flatMap({ entries.read(ids[position], at: $0, remembering: remembering) }), found.type == type,
                    take(&part, position, found.bytes)
                {
                    continue
                }
                unread.append(position)
            }
        }
    }
}
