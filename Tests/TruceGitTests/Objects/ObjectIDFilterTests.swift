import Testing

@testable import TruceGit

/// A filter of object ids answers yes for every id added, through its segments, and for few ids never added.
@Suite struct ObjectIDFilterTests {
    /// Ids as uniform as SHA-1s: 20 bytes of splitmix64 from `start`, apart for each `salt`.
    static func ids(_ count: Int, salt: UInt64) -> [ObjectID] {
        func mixed(_ value: UInt64) -> UInt64 {
            var z = value &+ 0x9E37_79B9_7F4A_7C15
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        var bytes = [UInt8](repeating: 0, count: 24)
        return (0..<count).map { number in
            let seed = UInt64(number) &* 3 &+ salt << 40
            bytes.withUnsafeMutableBytes { raw in
                for word in 0..<3 { raw.storeBytes(of: mixed(seed &+ UInt64(word)), toByteOffset: 8 * word, as: UInt64.self) }
            }
            return ObjectID(bytes: bytes[0..<20])
        }
    }

    /// Small segments, so that 30,000 ids fill four and start a fifth.
    @Test func everyIDAddedIsHeldThroughItsSegmentsAndFewOthersSeemSo() {
        var filter = ObjectIDFilter(firstSegmentBits: 1 << 12)
        let added = Self.ids(30_000, salt: 1)
        #expect(!filter.mayContain(added[0]))
        for id in added { filter.insert(id) }
        #expect(added.allSatisfy(filter.mayContain))
        let others = Self.ids(30_000, salt: 2)
        let wronglyHeld = others.count(where: filter.mayContain)
        #expect(wronglyHeld < others.count * 5 / 100, "\(wronglyHeld) of \(others.count)")
    }

    /// A segment filled to one id per ten bits answers yes for about 1 % of the ids never added.
    @Test func aFullSegmentAnswersYesForAboutOnePercentOfOthers() {
        var filter = ObjectIDFilter(firstSegmentBits: 1 << 16)
        for id in Self.ids((1 << 16) / ObjectIDFilter.bitsPerID, salt: 3) { filter.insert(id) }
        let others = Self.ids(50_000, salt: 4)
        let wronglyHeld = others.count(where: filter.mayContain)
        #expect(wronglyHeld < others.count * 15 / 1000, "\(wronglyHeld) of \(others.count)")
    }

    /// Sized for a count known up front (a pack a push wrote), a filter holds them all in one segment: about 1 % of
    /// others seem held, where segments grown from the smallest answer for each of theirs.
    @Test func aFilterSizedForItsIDsHoldsThemInOneSegment() {
        let added = Self.ids(20_000, salt: 5)
        var sized = ObjectIDFilter(holding: added.count)
        var grown = ObjectIDFilter(firstSegmentBits: 1 << 10)
        for id in added {
            sized.insert(id)
            grown.insert(id)
        }
        #expect(added.allSatisfy(sized.mayContain))
        let others = Self.ids(50_000, salt: 6)
        let wronglyHeld = others.count(where: sized.mayContain)
        #expect(wronglyHeld < others.count * 15 / 1000, "\(wronglyHeld) of \(others.count)")
        #expect(wronglyHeld < others.count(where: grown.mayContain))
    }
}
