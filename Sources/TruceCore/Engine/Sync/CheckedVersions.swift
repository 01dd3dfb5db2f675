/// The versions a receive's checks read, by id, as adoption reports them: held a field at a time (`ChangeList`) with
/// a position per id, where a `Version` per id in a dictionary took 28 MB of each batch of a first sync of 65,536
/// heads.
struct CheckedVersions {
    private var changes = ChangeList()
    private var isFirstVersion: [Bool] = []
    private var positions: [VersionID: Int32] = [:]

    var count: Int { changes.count }

    /// Records `version`, unless one of its id was recorded already (the same commit, so the same version).
    mutating func record(_ version: Version) {
        add(version.id, Change(recording: version), isFirstVersion: version.parents.isEmpty)
    }

    /// The change that version `id` makes, and whether it has no parent; nil when it was not recorded.
    subscript(id: VersionID) -> (change: Change, isFirstVersion: Bool)? {
        positions[id].map { (changes[Int($0)], isFirstVersion[Int($0)]) }
    }

    /// Records each of `other`'s versions not recorded here, in their order.
    mutating func merge(_ other: CheckedVersions) {
        guard count > 0 else {
            self = other
            return
        }
        // A change names its version: `other`'s are read in their order, with no sort of its positions.
        for position in 0..<other.count {
            let change = other.changes[position]
            add(change.version, change, isFirstVersion: other.isFirstVersion[position])
        }
    }

    private mutating func add(_ id: VersionID, _ change: Change, isFirstVersion isFirst: Bool) {
        guard positions[id] == nil else { return }
        positions[id] = Int32(changes.count)
        changes.append(change)
        isFirstVersion.append(isFirst)
    }
}
