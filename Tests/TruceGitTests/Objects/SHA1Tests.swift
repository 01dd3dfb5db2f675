import Foundation
import TestSupport
import Testing

@testable import TruceGit

/// The SHA-1 a pack's trailer is made with gives FIPS 180's digests and git's ids, however its input is split.
@Suite(.timeLimit(.minutes(10))) struct SHA1Tests {
    static func hex(_ digest: [UInt8]) -> String { ObjectID(bytes: digest[...]).hex }

    @Test func fipsVectors() {
        #expect(Self.hex(SHA1.hash([])) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        #expect(Self.hex(SHA1.hash(Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        let twoBlocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
        #expect(Self.hex(SHA1.hash(Array(twoBlocks.utf8))) == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
        let longer = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"
        #expect(Self.hex(SHA1.hash(Array(longer.utf8))) == "a49b2446a02c645bf419f995b67091253a04a259")
        #expect(Self.hex(SHA1.hash([UInt8](repeating: 0x61, count: 1_000_000))) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
    }

    /// The hexadecimal digest is the digest's bytes, two lowercase digits each, as `git hash-object` prints ids.
    @Test func hexDigestSpellsTheDigest() {
        for input in ["", "abc", "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"] {
            var sha = SHA1()
            sha.update(Array(input.utf8))
            #expect(sha.finalizeHex() == Self.hex(SHA1.hash(Array(input.utf8))), "\(input)")
        }
        var sha = SHA1()
        sha.update(Array("abc".utf8))
        #expect(sha.finalizeHex() == "a9993e364706816aba3e25717850c26c9cd0d89d")
    }

    /// Fed in pieces of every size up to a few blocks, the digest is the one of the whole.
    @Test func piecesHashAsTheWhole() {
        var random = SeededRandom(seed: 180)
        let bytes = (0..<700).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        let whole = SHA1.hash(bytes)
        for piece in [1, 3, 55, 56, 63, 64, 65, 127, 128, 129, 699] {
            var sha = SHA1()
            var start = 0
            while start < bytes.count {
                sha.update(Array(bytes[start..<min(start + piece, bytes.count)]))
                start += piece
            }
            #expect(sha.finalize() == whole, "fed \(piece) bytes at a time")
        }
    }

    /// A blob's id is the SHA-1 of "blob <size>\0" and its bytes: at every length around the padding's edges,
    /// it is the id `git hash-object` prints.
    @Test func blobIDsAreGitHashObjects() throws {
        var random = SeededRandom(seed: 40)
        for length in [0, 1, 40, 45, 46, 47, 48, 55, 56, 57, 63, 64, 65, 119, 120, 128, 1000, 70_000] {
            let content = (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            let digest = SHA1.hash(Array("blob \(length)\u{0}".utf8) + content)
            let result = try git(["hash-object", "--stdin"], input: Data(content))
            try #require(result.status == 0, "git hash-object failed: \(result.errorOutput)")
            #expect(Self.hex(digest) + "\n" == result.output, "a \(length)-byte blob")
            #expect(ObjectID(bytes: digest[...]) == ObjectID.blobHash(of: content))
        }
    }
}
