import Testing

@testable import TruceGit

/// A pack's reverse index gives where each entry ends, the same whether it holds its offsets in four bytes or eight.
@Suite struct PackReverseIndexTests {
    /// Offsets given out of order, in a pack under 4 GiB and one over: each offset's next is the following one in
    /// pack order, the last has none, and an offset between two entries gives the later one.
    @Test(arguments: [1 << 20, 1 << 33]) func eachOffsetIsFollowedByTheNextInPackOrder(packSize: Int) {
        // Past 4 GiB, an entry only eight bytes can hold.
        let offsets = [12, 4_000, 150, 90_000, 151, 700] + (packSize > 1 << 32 ? [5_000_000_000] : [])
        let index = PackReverseIndex(count: offsets.count, packSize: packSize) { add in offsets.forEach(add) }
        let sorted = offsets.sorted()
        #expect(index.count == offsets.count)
        for (position, offset) in sorted.enumerated() {
            #expect(index.offset(after: offset) == (position + 1 < sorted.count ? sorted[position + 1] : nil))
        }
        #expect(index.offset(after: 0) == 12)
        #expect(index.offset(after: 800) == 4_000)
        #expect(index.offset(after: 90_001) == (packSize > 1 << 32 ? 5_000_000_000 : nil))
    }
}
