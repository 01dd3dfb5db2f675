#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Text compared as git compares it: by its UTF-8 bytes (`strcmp`), never by Unicode canonical equivalence.
///
/// `utf8.lexicographicallyPrecedes` says the same, a byte at a time through
/// an iterator: sorting the 100,000 head names of a first sync with it took
/// longer than writing them. These compare the contiguous bytes native strings
/// and buffers hold with one `memcmp`, and fall back to iterating otherwise.
package enum ByteOrder {
    /// Whether `left`'s bytes sort before `right`'s.
    package static func precedes(_ left: String, _ right: String) -> Bool { compare(left.utf8, right.utf8) < 0 }

    /// Whether `left`'s bytes sort before `right`.
    package static func precedes(_ left: String, _ right: Slice<UnsafeBufferPointer<UInt8>>) -> Bool { compare(left.utf8, right) < 0 }

    /// Whether `left` sorts before `right`.
    package static func precedes(_ left: Slice<UnsafeBufferPointer<UInt8>>, _ right: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        compare(left, right) < 0
    }

    /// Whether the bytes are the same.
    package static func equal(_ left: String, _ right: String) -> Bool {
        left.utf8.count == right.utf8.count && compare(left.utf8, right.utf8) == 0
    }

    /// Whether `left`'s bytes are `right`.
    package static func equal(_ left: String, _ right: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        left.utf8.count == right.count && compare(left.utf8, right) == 0
    }

    /// Below zero, zero or above zero as `left` sorts before, equal to or after `right`.
    private static func compare(_ left: some Collection<UInt8>, _ right: some Collection<UInt8>) -> Int {
        let contiguous = left.withContiguousStorageIfAvailable { left in
            right.withContiguousStorageIfAvailable { right in
                let common = min(left.count, right.count)
                let order = common == 0 ? 0 : Int(memcmp(left.baseAddress!, right.baseAddress!, common))
                return order != 0 ? order : left.count - right.count
            }
        }
        if let contiguous, let order = contiguous { return order }
        var leftBytes = left.makeIterator(), rightBytes = right.makeIterator()
        while true {
            switch (leftBytes.next(), rightBytes.next()) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case (let l?, let r?): if l != r { return Int(l) - Int(r) }
            }
        }
    }
}
