internal import TruceGit

/// Documents with a version each, in the order appended, held as one buffer of key bytes and one array of ids: what a
/// bulk report lists without a string and an entry per version (an import of a million documents held 100 MB that way
/// to its end, whatever its batch).
struct KeyedVersions: Sendable {
    private var keyBytes: [UInt8] = []
    /// Where each key's bytes end in `keyBytes`; it starts where the one before ends.
    private var keyEnds: [Int] = []
    private var ids: [ObjectID] = []

    var count: Int { ids.count }

    mutating func append(_ key: DocumentKey, _ version: VersionID) {
        keyBytes.append(contentsOf: key.rawValue.utf8)
        keyEnds.append(keyBytes.count)
        ids.append(version.objectID)
    }

    func key(at position: Int) -> DocumentKey {
        // The bytes are a valid key's UTF-8, so decoding gives back the very string appended.
        DocumentKey(checked: String(decoding: keyBytes[keyRange(at: position)], as: UTF8.self))
    }

    func version(at position: Int) -> VersionID { VersionID(ids[position]) }

    /// How many different keys there are, told apart by their bytes.
    var distinctKeyCount: Int {
        keyBytes.withUnsafeBufferPointer { bytes in
            func key(_ position: Int) -> Slice<UnsafeBufferPointer<UInt8>> { bytes[keyRange(at: position)] }
            let sorted = ids.indices.sorted { key($0).lexicographicallyPrecedes(key($1)) }
            return sorted.indices.count { $0 == 0 || !key(sorted[$0 - 1]).elementsEqual(key(sorted[$0])) }
        }
    }

    private func keyRange(at position: Int) -> Range<Int> {
        (position == 0 ? 0 : keyEnds[position - 1])..<keyEnds[position]
    }
}

extension KeyedVersions: Codable {
    /// The entry at `position`, as an import's report lists it.
    func entry(at position: Int) -> ImportReport.ImportedVersion {
        ImportReport.ImportedVersion(key: key(at: position), version: version(at: position))
    }

    /// Reads the entries `encode(to:)` writes.
    init(from decoder: Decoder) throws {
        self.init()
        var entries = try decoder.unkeyedContainer()
        while !entries.isAtEnd {
            let entry = try entries.decode(ImportReport.ImportedVersion.self)
            append(entry.key, entry.version)
        }
    }

    /// Writes the list as `ImportReport.ImportedVersion` entries, one at a time: the array of them is never made.
    func encode(to encoder: Encoder) throws {
        var entries = encoder.unkeyedContainer()
        for position in 0..<count { try entries.encode(entry(at: position)) }
    }
}
