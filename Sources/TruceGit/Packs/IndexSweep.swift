/// Many lookups in pack indexes made in the order of the ids looked up, the indexes' pages let go behind.
///
/// An index lists its ids sorted: looked up in their order, each index is read front to back, and what was read
/// before the last release is not read again. Looked up in the order a walk finds them, a batch of a first push or
/// sync went to every page of every index at random, and the whole of them (106 MB for a million documents) counted
/// as the process's memory until the batch ended (`IndexSweepTests`).
enum IndexSweep {
    /// Lookups between two releases of the indexes' pages.
    static let lookupsBetweenReleases = 4096

    /// Calls `lookUp` with each of `positions` (indices of `ids`) grouped by `group` (the pack that lists each, say) and
    /// in the order of their ids within a group, and `release` before the first, whenever the group changes, every
    /// `lookupsBetweenReleases` lookups, and after the last.
    ///
    /// A group at a time: on a store just written, a page of an index maps the whole large page-cache folio it is in,
    /// and a sweep through all of a million documents' 30 indexes at once held a folio of each (60-100 MB).
    static func lookUp<IDs: RandomAccessCollection<ObjectID>>(
        _ positions: some Sequence<IDs.Index>, of ids: IDs, groupedBy group: (IDs.Index) -> Int = { _ in 0 },
        releasing release: () -> Void, _ lookUp: (IDs.Index) -> Void
    ) {
        Self.lookUp(ascending: ascending(positions, of: ids), groupedBy: group, releasing: release, lookUp)
    }

    /// `lookUp(_:of:groupedBy:releasing:_:)` of positions already in ascending order of their ids: grouped as they
    /// are, by counting, without a second sort (a caller that walked the packs' owners table in that order has them).
    static func lookUp<Position>(
        ascending positions: [Position], groupedBy group: (Position) -> Int, releasing release: () -> Void, _ lookUp: (Position) -> Void
    ) {
        // Groups from -1 (none), counted from 0: each group's positions keep their order.
        let groups = positions.map { position in
            let place = group(position) + 1
            precondition(place >= 0 && place <= 1 << 10, "a sweep's groups are packs")
            return place
        }
        var starts = [Int](repeating: 0, count: (groups.max() ?? 0) + 2)
        for place in groups { starts[place + 1] += 1 }
        for place in starts.indices.dropFirst() { starts[place] += starts[place - 1] }
        var ordered = positions
        for (position, place) in zip(positions, groups) {
            ordered[starts[place]] = position
            starts[place] += 1
        }
        // `starts[place]` is now where the group after `place` begins.
        var sinceRelease = 0, place = 0
        for (step, position) in ordered.enumerated() {
            let changed = step == 0 || step == starts[place]
            while step >= starts[place] { place += 1 }
            if changed || sinceRelease == lookupsBetweenReleases {
                release()
                sinceRelease = 0
            }
            lookUp(position)
            sinceRelease += 1
        }
        release()
    }

    /// `positions` (indices of `ids`) in ascending order of their ids' leading 64 bits (ids that share them, in either
    /// order). Sorted by one word each: compared as whole ids, through their collection, the sorts were a tenth of a
    /// first push of 100,000 documents.
    static func ascending<IDs: RandomAccessCollection<ObjectID>>(_ positions: some Sequence<IDs.Index>, of ids: IDs) -> [IDs.Index] {
        var keyed = positions.map { (key: ids[$0].leadingWords.0, position: $0) }
        keyed.sort { $0.key < $1.key }
        return keyed.map(\.position)
    }
}
