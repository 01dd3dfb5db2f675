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
        // Sorted by one word each: the group (from -1) in the top ten bits, the id's leading 54 bits below. Two ids that
        // share those are looked up in either order. Compared as whole ids, through their collection, the sorts were a
        // tenth of a first push of 100,000 documents.
        var ordered = positions.map { position in
            let place = group(position) + 1
            precondition(place >= 0 && place < 1 << 10, "a sweep's groups are packs: at most 256")
            return (key: UInt64(place) << 54 | ids[position].leadingWords.0 >> 10, position: position)
        }
        ordered.sort { $0.key < $1.key }
        var sinceRelease = 0
        for (step, entry) in ordered.enumerated() {
            if step == 0 || sinceRelease == lookupsBetweenReleases || entry.key >> 54 != ordered[step - 1].key >> 54 {
                release()
                sinceRelease = 0
            }
            lookUp(entry.position)
            sinceRelease += 1
        }
        release()
    }

    /// The indices of `ids` in ascending order of their leading 64 bits (ids that share them, in either order).
    static func ascending<IDs: RandomAccessCollection<ObjectID>>(_ ids: IDs) -> [IDs.Index] {
        var keyed = ids.indices.map { (key: ids[$0].leadingWords.0, position: $0) }
        keyed.sort { $0.key < $1.key }
        return keyed.map(\.position)
    }
}
