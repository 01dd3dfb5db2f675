internal import CLibgit2

/// A git object id (SHA-1): of a commit, a tree, a blob. A version's id is a ``VersionID``, which wraps its commit's.
package struct ObjectID: Hashable, Comparable, Sendable, CustomStringConvertible, Codable {
    // The 20 bytes as big-endian words: an id is copied, hashed and compared without a heap allocation (a sync
    // handles hundreds of thousands), and comparing the words compares the bytes.
    private let first: UInt64, second: UInt64, third: UInt32

    /// The id's first sixteen bytes as two words: SHA-1 bits, uniform already, for a filter to place the id by.
    var leadingWords: (UInt64, UInt64) { (first, second) }

    /// The 20 raw bytes.
    package var bytes: [UInt8] {
        var oid = raw
        return withUnsafeBytes(of: &oid.id) { Array($0) }
    }

    init(_ oid: git_oid) {
        var oid = oid
        self = withUnsafeBytes(of: &oid.id) { ObjectID(twentyBytes: $0) }
    }

    /// Appends the 20 raw bytes to `bytes`, without an array of their own (a list of a million ids held as bytes).
    package func append(to bytes: inout [UInt8]) {
        var oid = raw
        withUnsafeBytes(of: &oid.id) { bytes.append(contentsOf: $0) }
    }

    /// The id whose 20 raw bytes are `raw` (as a pack index lists them).
    package init(bytes raw: ArraySlice<UInt8>) {
        precondition(raw.count == 20, "an object id is 20 bytes")
        self =
            raw.withContiguousStorageIfAvailable { ObjectID(twentyBytes: UnsafeRawBufferPointer($0)) }
            ?? Array(raw).withUnsafeBytes { ObjectID(twentyBytes: $0) }
    }

    private init(twentyBytes raw: UnsafeRawBufferPointer) {
        func word(_ range: Range<Int>) -> UInt64 { raw[range].reduce(0) { $0 << 8 | UInt64($1) } }
        (first, second, third) = (word(0..<8), word(8..<16), UInt32(word(16..<20)))
    }

    /// The id of forty zeros, which names no object: git's "none" (a ref that did not exist, in a reflog line).
    package static let zero = ObjectID(bytes: [UInt8](repeating: 0, count: 20)[...])

    /// Parses a full 40-character hexadecimal id; nil when it is not one.
    package init?(hex: String) {
        self.init(hexBytes: hex.utf8)
    }

    /// `init(hexBytes:)` for bytes read in place. Generic, it is not specialized for a caller in another module: the
    /// journal's parser spent most of its time there, a byte at a time through the protocol.
    /// Read in place through a pointer, a word at a time: a first sync of a million documents parses some millions of
    /// ids this way (`packed-refs` records, commit headers).
    package init?(hexBytes digits: Slice<UnsafeBufferPointer<UInt8>>) {
        guard digits.count == 40, let base = digits.base.baseAddress else { return nil }
        let start = base + digits.startIndex
        var invalid = false
        func word(_ offset: Int, digits count: Int) -> UInt64 {
            var value: UInt64 = 0
            for index in offset..<(offset + count) {
                let character = start[index]
                let decimal = character &- 0x30, letter = (character | 0x20) &- 0x61
                let nibble = decimal < 10 ? decimal : letter < 6 ? letter + 10 : 0xFF
                invalid = invalid || nibble == 0xFF
                value = value << 4 | UInt64(nibble & 0xF)
            }
            return value
        }
        let words = (word(0, digits: 16), word(16, digits: 16), word(32, digits: 8))
        guard !invalid else { return nil }
        (first, second, third) = (words.0, words.1, UInt32(words.2))
    }

    /// Parses 40 hexadecimal digits given as bytes (a line of a git file); nil when they are not.
    package init?<Digits: Collection<UInt8>>(hexBytes digits: Digits) {
        self.init(parsing: digits)
    }

    private init?<Digits: Collection<UInt8>>(parsing digits: Digits) {
        guard digits.count == 40 else { return nil }
        var words: (UInt64, UInt64, UInt64) = (0, 0, 0)
        for (index, character) in digits.enumerated() {
            guard let nibble = Self.nibble(character).map(UInt64.init) else { return nil }
            switch index {
            case ..<16: words.0 = words.0 << 4 | nibble
            case ..<32: words.1 = words.1 << 4 | nibble
            default: words.2 = words.2 << 4 | nibble
            }
        }
        (first, second, third) = (words.0, words.1, UInt32(words.2))
    }

    /// The 40-character lowercase hexadecimal form that git prints.
    package var hex: String {
        String(unsafeUninitializedCapacity: 40) { out in
            func digit(_ nibble: UInt64) -> UInt8 { nibble < 10 ? 0x30 + UInt8(nibble) : 0x57 + UInt8(nibble) }
            for index in 0..<16 {
                out[index] = digit(first >> (60 - 4 * UInt64(index)) & 0xF)
                out[16 + index] = digit(second >> (60 - 4 * UInt64(index)) & 0xF)
            }
            for index in 0..<8 { out[32 + index] = digit(UInt64(third) >> (28 - 4 * UInt64(index)) & 0xF) }
            return 40
        }
    }

    /// The first seven hexadecimal digits, as `git log --oneline` shows them.
    package var short: String { String(hex.prefix(7)) }

    package var description: String { hex }

    // Hashing. An id is a SHA-1 digest, so its words are uniform already: Set and Dictionary (ids by the hundred
    // thousand in a sync, an import, a push) mix two words with the process's seed in a few multiplications, where
    // SipHash over all 20 bytes was a tenth of a first sync's time. Every bit of the seed reaches the bucket, so a
    // peer cannot aim ids at one bucket without ids whose first 64 bits agree beyond the bucket's width: far more
    // hashes per id than a flood could use.
    package func hash(into hasher: inout Hasher) { hasher.combine(first) }

    package func _rawHashValue(seed: Int) -> Int {
        var mixed = first ^ UInt64(UInt(bitPattern: seed))
        mixed = (mixed ^ mixed >> 32) &* 0xD6E8_FEB8_6659_FD93
        mixed = (mixed ^ second ^ mixed >> 29) &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: mixed ^ mixed >> 32)
    }

    package static func < (lhs: ObjectID, rhs: ObjectID) -> Bool { (lhs.first, lhs.second, lhs.third) < (rhs.first, rhs.second, rhs.third) }

    var raw: git_oid {
        var oid = git_oid()
        // Every libgit2 call takes one: written from the words in place, not through a `bytes` array.
        withUnsafeMutableBytes(of: &oid.id) { out in
            for index in 0..<8 {
                out[index] = UInt8(truncatingIfNeeded: first >> (56 - 8 * index))
                out[8 + index] = UInt8(truncatingIfNeeded: second >> (56 - 8 * index))
            }
            for index in 0..<4 { out[16 + index] = UInt8(truncatingIfNeeded: third >> (24 - 8 * index)) }
        }
        return oid
    }

    package init(from decoder: Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let id = ObjectID(hex: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not an object id: \(text)"))
        }
        self = id
    }

    package func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hex)
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
