import CLibgit2
import Foundation
import TestSupport
import Testing

@testable import TruceGit

/// An id held as three words reads and writes the same 20 bytes and 40 digits git does, and orders as its bytes do.
@Suite(.timeLimit(.minutes(10))) struct ObjectIDTests {
    static func samples() -> [[UInt8]] { objectIDByteSamples() }

    @Test func bytesDigitsAndLibgit2sOidRoundTrip() throws {
        for bytes in Self.samples() {
            let id = ObjectID(bytes: bytes[...])
            #expect(id.bytes == bytes)
            let digits = bytes.map { String(format: "%02x", $0) }.joined()
            #expect(id.hex == digits)
            #expect(ObjectID(hex: digits) == id)
            #expect(ObjectID(hex: digits.uppercased()) == id)
            #expect(ObjectID(id.raw) == id)
            var oid = id.raw
            var printed = [CChar](repeating: 0, count: 41)
            git_oid_tostr(&printed, 41, &oid)
            #expect(
                String(decoding: printed.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) == digits,
                "libgit2 prints another id than the bytes")
        }
        #expect(ObjectID(hex: String(repeating: "g", count: 40)) == nil)
        #expect(ObjectID(hex: String(repeating: "a", count: 39)) == nil)
    }

    /// The in-place reading (a pointer into a mapped file) takes and refuses exactly what the generic one does: every
    /// byte value at the first, a middle and the last digit of every word.
    @Test func digitsReadInPlaceAreReadAsAnyOtherDigits() {
        for bytes in Self.samples().suffix(24) {
            let digits = Array(bytes.map { String(format: "%02X", $0) }.joined().utf8)
            for position in [0, 15, 16, 31, 32, 39] {
                for value in UInt8.min...UInt8.max {
                    var changed = digits
                    changed[position] = value
                    let generic = ObjectID(hexBytes: changed[...])
                    let inPlace = ([0x20] + changed + [0x0A]).withUnsafeBufferPointer { ObjectID(hexBytes: $0[1..<41]) }
                    #expect(inPlace == generic, "digit \(position) as byte \(value)")
                }
            }
            #expect(digits.withUnsafeBufferPointer { ObjectID(hexBytes: $0[0..<39]) } == nil)
        }
    }

    @Test func idsOrderAndHashAsTheirBytes() {
        let samples = Self.samples()
        let ids = samples.map { ObjectID(bytes: $0[...]) }
        #expect(ids.sorted().map(\.bytes) == samples.sorted { $0.lexicographicallyPrecedes($1) })
        #expect(Set(ids).count == Set(samples).count)
        #expect(Set(ids + ids.map { ObjectID(bytes: $0.bytes[...]) }).count == Set(samples).count)
    }

    /// Sets and dictionaries hash an id by its leading words: ids that share them (and so every bucket) are still told
    /// apart by their other bytes, and an id's hash follows its bytes, not how it was made.
    @Test func idsThatShareTheirLeadingBytesStayDistinctInSetsAndDictionaries() {
        let prefix = [UInt8](repeating: 0xAB, count: 16)
        let sharing = (0..<1_000).map { index in ObjectID(bytes: (prefix + withUnsafeBytes(of: UInt32(index).bigEndian) { Array($0) })[...]) }
        #expect(Set(sharing).count == 1_000)
        let named = Dictionary(uniqueKeysWithValues: sharing.enumerated().map { ($1, $0) })
        for (index, id) in sharing.enumerated() {
            #expect(named[ObjectID(hex: id.hex)!] == index)
        }
        let random = Self.samples().map { ObjectID(bytes: $0[...]) }
        for id in random {
            #expect(id.hashValue == ObjectID(hex: id.hex)!.hashValue)
            var hasher = Hasher(), again = Hasher()
            hasher.combine(id)
            again.combine(ObjectID(bytes: id.bytes[...]))
            #expect(hasher.finalize() == again.finalize())
        }
    }
}
