/// Many lookups in pack indexes made in the order of the ids looked up, the indexes' pages let go behind.
///
/// An index lists its ids sorted: looked up in their order, each index is read front to back, and what was read
/// before the last release is not read again. Looked up in the order a walk finds them, a batch of a first push or
/// sync went to every page of every index at random, and the whole of them (106 MB for a million documents) counted
/// as the process's memory until the batch ended (`IndexSweepTests`).
enum IndexSweep {
    /// Lookups between two releases of the indexes' pages.
    static let lookupsBetweenReleases = 4096

    /// Calls `lookUp` with each of `positions` (indices of `ids`) in the order of their ids, and `release` before
    /// the first, every `lookupsBetweenReleases` lookups, and after the last.
    static func lookUp<IDs: RandomAccessCollection<ObjectID>>(
        _ positions: some Sequence<IDs.Index>, of ids: IDs, releasing release: () -> Void, _ lookUp: (IDs.Index) -> Void
    ) {
        for (step, position) in positions.sorted(by: { ids[$0] < ids[$1] }).enumerated() {
            if step % lookupsBetweenReleases == 0 { release() }
            lookUp(position)
        }
        release()
    }
}
