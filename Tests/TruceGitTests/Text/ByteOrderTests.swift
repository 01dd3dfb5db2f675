import Foundation
import TestSupport
import Testing

@testable import TruceGit

/// `ByteOrder` orders and equates text as git does, by bytes, whatever the storage.
@Suite struct ByteOrderTests {
    /// Pairs where bytes and Unicode disagree or one is a prefix of the other, and seeded random ones, against the
    /// byte-at-a-time comparison of the standard library, from strings and from buffers alike.
    @Test func ordersAndEquatesAsTheBytesDo() throws {
        var pairs: [(String, String)] = [
            ("", ""), ("", "a"), ("a", ""), ("refs/a", "refs/a/b"), ("refs/a/b", "refs/a-b"), ("e\u{301}", "\u{E9}"),
            ("\u{E9}", "e\u{301}"), ("Z", "a"), ("a\u{0}b", "a\u{0}c"), ("a long name past the fifteen bytes kept inline", "a long name"),
        ]
        var random = SeededRandom(seed: 7)
        let alphabet: [String] = ["a", "b", "/", "-", "\u{E9}", "e\u{301}", "\u{0}", "z"]
        for _ in 0..<500 {
            let text = { (0..<Int(random.next() % 6)).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }.joined() }
            pairs.append((text(), text()))
        }
        for (left, right) in pairs {
            let precedes = left.utf8.lexicographicallyPrecedes(right.utf8), equal = left.utf8.elementsEqual(right.utf8)
            #expect(ByteOrder.precedes(left, right) == precedes, "\(Array(left.utf8)) < \(Array(right.utf8))")
            #expect(ByteOrder.equal(left, right) == equal, "\(Array(left.utf8)) == \(Array(right.utf8))")
            Array(right.utf8).withUnsafeBufferPointer { bytes in
                #expect(ByteOrder.precedes(left, bytes[...]) == precedes)
                #expect(ByteOrder.equal(left, bytes[...]) == equal)
                Array(left.utf8).withUnsafeBufferPointer { leftBytes in
                    #expect(ByteOrder.precedes(leftBytes[...], bytes[...]) == precedes)
                }
            }
        }
    }
}
