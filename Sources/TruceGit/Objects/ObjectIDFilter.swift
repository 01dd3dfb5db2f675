/// Object ids added, as a Bloom filter: asked for an id, it may answer yes for one never added, never no for one that
/// was. About ten bits an id, whatever the number added.
///
/// A push in batches asks it before it looks in the packs its earlier batches wrote, which nearly every object of a
/// first push is missing from: a first push of a million documents spent a fifth of its time finding that out in
/// libgit2 (`HeldObjects`).
///
/// The bits come in segments, each four times the one before, so that no count need be known up front: a segment is
/// full at one id per `bitsPerID` bits, where it answers yes for about 1 % of the ids never added, and four segments
/// hold nearly nine million ids.
struct ObjectIDFilter {
    private var segments: [Segment] = []
    private var addedToLast = 0
    private let firstSegmentBits: Int

    static let bitsPerID = 10

    /// An empty filter whose first segment has `firstSegmentBits` bits (a power of two, at least 64).
    init(firstSegmentBits: Int = 1 << 20) {
        precondition(firstSegmentBits >= 64 && firstSegmentBits & (firstSegmentBits - 1) == 0)
        self.firstSegmentBits = firstSegmentBits
    }

    /// An empty filter whose first segment holds `count` ids: one segment, for a count known up front.
    init(holding count: Int) {
        var bits = 64
        while bits < count * Self.bitsPerID { bits <<= 1 }
        self.init(firstSegmentBits: bits)
    }

    mutating func insert(_ id: ObjectID) {
        if segments.isEmpty || addedToLast * Self.bitsPerID >= segments[segments.count - 1].bitCount {
            segments.append(Segment(bitCount: segments.last.map { 4 * $0.bitCount } ?? firstSegmentBits))
            addedToLast = 0
        }
        segments[segments.count - 1].insert(id)
        addedToLast += 1
    }

    func mayContain(_ id: ObjectID) -> Bool {
        segments.contains { $0.mayContain(id) }
    }

    private struct Segment {
        private var words: [UInt64]
        let bitCount: Int
        /// Bits set per id: the best for ten bits an id.
        static let probes = 7

        init(bitCount: Int) {
            self.bitCount = bitCount
            words = [UInt64](repeating: 0, count: bitCount / 64)
        }

        mutating func insert(_ id: ObjectID) {
            let (first, step) = Self.hashes(of: id)
            for probe in 0..<UInt64(Self.probes) {
                let bit = bit(first &+ probe &* step)
                words[bit >> 6] |= 1 << UInt64(bit & 63)
            }
        }

        func mayContain(_ id: ObjectID) -> Bool {
            let (first, step) = Self.hashes(of: id)
            for probe in 0..<UInt64(Self.probes) {
                let bit = bit(first &+ probe &* step)
                if words[bit >> 6] & 1 << UInt64(bit & 63) == 0 { return false }
            }
            return true
        }

        /// The id's probes are `first + probe × step` (double hashing, Kirsch and Mitzenmacher) on two words of it.
        private static func hashes(of id: ObjectID) -> (first: UInt64, step: UInt64) {
            let (first, second) = id.leadingWords
            return (first, second | 1)
        }

        private func bit(_ hash: UInt64) -> Int { Int(truncatingIfNeeded: hash & UInt64(bitCount - 1)) }
    }
}
