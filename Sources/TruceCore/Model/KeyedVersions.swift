internal import TruceGit

/// Documents with a version each, in the order appended, held as one buffer of key bytes and one array of ids: what a
/// bulk report lists without a string and an entry per version (an import of a million documents held 100 MB that way
/// to its end, whatever its batch).
struct KeyedVersions: Sendable {
    private var keyBytes: [UInt8] = []
    /// Each key's length in bytes (a key is at most `DocumentKey.maximumLength`), and where every
    /// `keysBetweenStarts`th key starts in `keyBytes`: a key's place is summed from the start before it. An end per key
    /// took four times the room (8 MB of a first sync of a million documents).
    private var keyLengths: [UInt16] = []
    private var keyStarts: [Int] = []
    /// The ids' 20 bytes each, one after the other: an `ObjectID` takes 24 in an array.
    private var idBytes: [UInt8] = []

    private static let keysBetweenStarts = 64

    var count: Int { keyLengths.count }

    mutating func append(_ key: DocumentKey, _ version: VersionID) {
        if count % Self.keysBetweenStarts == 0 { keyStarts.append(keyBytes.count) }
        let start = keyBytes.count
        keyBytes.append(contentsOf: key.rawValue.utf8)
        keyLengths.append(UInt16(keyBytes.count - start))
        version.objectID.append(to: &idBytes)
    }

    func key(at position: Int) -> DocumentKey {
        // The bytes are a valid key's UTF-8, so decoding gives back the very string appended.
        DocumentKey(checked: String(decoding: keyBytes[keyRange(at: position)], as: UTF8.self))
    }

    func version(at position: Int) -> VersionID { VersionID(ObjectID(bytes: idBytes[20 * position..<20 * position + 20])) }

    /// How many different keys there are, told apart by their bytes.
    var distinctKeyCount: Int {
        // Each key's place, summed once in order (`keyRange` sums from the start before it, for one key).
        var start = 0
        let ranges = keyLengths.map { length in
            defer { start += Int(length) }
            return start..<start + Int(length)
        }
        return keyBytes.withUnsafeBufferPointer { bytes in
            func key(_ position: Int) -> Slice<UnsafeBufferPointer<UInt8>> { bytes[ranges[position]] }
            let sorted = ranges.indices.sorted { key($0).lexicographicallyPrecedes(key($1)) }
            return sorted.indices.count { $0 == 0 || !key(sorted[$0 - 1]).elementsEqual(key(sorted[$0])) }
        }
    }

    private func keyRange(at position: Int) -> Range<Int> {
        let first = position - position % Self.keysBetweenStarts
        let start = keyLengths[first..<position].reduce(keyStarts[position / Self.keysBetweenStarts]) { $0 + Int($1) }
        return start..<start + Int(keyLengths[position])
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
