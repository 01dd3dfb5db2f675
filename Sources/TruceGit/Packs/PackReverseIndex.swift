/// Every entry's offset in a pack, in pack order: an entry ends where the next begins (what git's reverse index gives,
/// which libgit2 1.5 neither writes nor reads).
///
/// Four bytes an offset for a pack under 4 GiB, eight above: at eight for every pack, the two a first push of a million
/// documents reads held 32 MB (`PackReverseIndexTests`).
struct PackReverseIndex: Sendable {
    private let narrow: [UInt32]
    private let wide: [Int]

    /// The offsets `offsets` gives, `count` at most, of a pack of `packSize` bytes, sorted.
    init(count: Int, packSize: Int, offsets: (_ add: (Int) -> Void) -> Void) {
        if packSize <= Int(UInt32.max) {
            // Made in one array, sorted in place: grown by doubling and sorted into a copy, a pack of three million
            // objects allocated and faulted in twice what it keeps.
            var narrow: [UInt32] = []
            narrow.reserveCapacity(count)
            offsets { narrow.append(UInt32($0)) }
            narrow.sort()
            (self.narrow, wide) = (narrow, [])
        } else {
            var wide: [Int] = []
            wide.reserveCapacity(count)
            offsets { wide.append($0) }
            wide.sort()
            (narrow, self.wide) = ([], wide)
        }
    }

    /// How many offsets it holds.
    var count: Int { narrow.isEmpty ? wide.count : narrow.count }

    /// The first offset greater than `offset`; nil when none is.
    func offset(after offset: Int) -> Int? {
        narrow.isEmpty ? Self.first(in: wide, above: offset) : Self.first(in: narrow, above: offset)
    }

    private static func first<Offset: BinaryInteger>(in offsets: [Offset], above offset: Int) -> Int? {
        var low = 0, high = offsets.count
        while low < high {
            let middle = (low + high) / 2
            if Int(offsets[middle]) <= offset { low = middle + 1 } else { high = middle }
        }
        return low < offsets.count ? Int(offsets[low]) : nil
    }
}
