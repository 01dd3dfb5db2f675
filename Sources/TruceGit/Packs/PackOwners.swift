/// Which packs list an id: the leading 32 bits of every id the packs' indexes list, sorted, each with its pack.
///
/// A lookup tried the pack of the last object found, then every other until one listed the id: in a store of a million
/// documents, about thirty packs of 131,072 objects, most lookups searched half of them (a third of a first push's
/// time). With this table a lookup searches the packs that list the id, nearly always one (ids are hashes: two ids
/// share 32 leading bits once in a few thousand lookups), for 5 bytes per object.
struct PackOwners {
    /// Fewer packs than this are searched one after another: the table costs more than it saves.
    static let fewestPacks = 8
    /// Fewer lookups than this are searched one pack after another, whatever the number of objects.
    static let fewestLookups = 4_096

    private let keys: [UInt32]
    private let owners: [UInt8]

    /// Nil for more packs than a byte numbers.
    init?(_ packs: [MappedPack]) {
        guard packs.count <= 256 else { return nil }
        var combined: [UInt64] = []
        combined.reserveCapacity(packs.reduce(0) { $0 + $1.count })
        for (position, pack) in packs.enumerated() {
            pack.forEachLeadingKey { combined.append(UInt64($0) << 8 | UInt64(position)) }
            // Read front to back once: kept, every index of a million documents' store stayed resident (54 MB at the
            // end of a first sync, whose push of one manifest made the table).
            pack.releaseIndexPages()
        }
        combined.sort()
        keys = combined.map { UInt32(truncatingIfNeeded: $0 >> 8) }
        owners = combined.map { UInt8(truncatingIfNeeded: $0) }
    }

    /// The first pack that may list each of `ids`, -1 for none, in their order; `ids` in ascending order, which the
    /// table is walked forward in once (a search of the whole table for each, at random through its 20 MB, was a
    /// tenth of a first push of a million documents).
    func firstOwners(ofAscending ids: some Sequence<ObjectID>) -> [Int] {
        var position = 0
        return ids.map { id in
            let key = Self.key(of: id)
            // Galloping forward from the last place, then halving back within the last step.
            var step = 1, low = position
            while position < keys.count, keys[position] < key {
                low = position + 1
                position = min(position + step, keys.count)
                step *= 2
            }
            var high = position
            while low < high {
                let middle = (low + high) / 2
                if keys[middle] < key { low = middle + 1 } else { high = middle }
            }
            position = low
            return position < keys.count && keys[position] == key ? Int(owners[position]) : -1
        }
    }

    /// The table's key of `id`: its leading 32 bits.
    private static func key(of id: ObjectID) -> UInt32 { UInt32(truncatingIfNeeded: id.leadingWords.0 >> 32) }

    /// Calls `body` with each pack that may list `id` (whose table has its leading 32 bits), until `body` returns true.
    func forEachOwner(of id: ObjectID, _ body: (Int) -> Bool) {
        let key = Self.key(of: id)
        // The first place whose key is not below `key`: the keys are hashes, spread evenly, so a few guesses from
        // their values get close before halving takes over.
        var low = 0, high = keys.count
        var lowKey = UInt64(0), highKey = UInt64(1) << 32
        var guesses = 0
        while low < high {
            var middle = (low + high) / 2
            if guesses < 4, highKey > lowKey, UInt64(key) >= lowKey {
                let fraction = Double(UInt64(key) - lowKey) / Double(highKey - lowKey)
                middle = min(high - 1, low + Int(fraction * Double(high - low)))
            }
            guesses += 1
            if keys[middle] < key {
                low = middle + 1
                lowKey = UInt64(keys[middle])
            } else {
                high = middle
                highKey = UInt64(keys[middle])
            }
        }
        var position = low
        while position < keys.count, keys[position] == key {
            if body(Int(owners[position])) { return }
            position += 1
        }
    }
}
