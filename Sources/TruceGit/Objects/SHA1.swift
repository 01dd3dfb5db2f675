/// Re-implements git's pack and pack index checksums (gitformat-pack): byte-compatible with git, listed in TruceGit/README.md.
///
/// SHA-1 (FIPS 180-4) of raw bytes, fed in pieces: the trailer a pack ends with.
///
/// libgit2 hashes raw bytes only inside (its public `git_odb_hash` hashes an
/// object with its header), the toolchain has no SHA-1 on Linux, and the
/// indexer rejects a pack whose trailer does not match, so `PackWriter` needs
/// its own. Not for security: git's ids are SHA-1, and so is a pack's trailer.
package struct SHA1 {
    private var h0: UInt32 = 0x6745_2301, h1: UInt32 = 0xEFCD_AB89, h2: UInt32 = 0x98BA_DCFE, h3: UInt32 = 0x1032_5476
    private var h4: UInt32 = 0xC3D2_E1F0
    /// The bytes fed since the last whole 64-byte block: fewer than 64.
    private var pending: [UInt8] = []
    /// How many bytes have been fed in all.
    private var length: UInt64 = 0

    package init() {}

    /// The digest of `bytes` (20 bytes).
    package static func hash(_ bytes: [UInt8]) -> [UInt8] {
        var sha = SHA1()
        sha.update(bytes)
        return sha.finalize()
    }

    /// Feeds `bytes`.
    package mutating func update(_ bytes: [UInt8]) { bytes.withUnsafeBytes { update($0) } }

    /// Feeds the bytes `buffer` points at.
    package mutating func update(_ buffer: UnsafeRawBufferPointer) {
        length &+= UInt64(buffer.count)
        var rest = buffer[...]
        if !pending.isEmpty {
            let taken = min(64 - pending.count, rest.count)
            pending += rest.prefix(taken)
            rest = rest.dropFirst(taken)
            guard pending.count == 64 else { return }
            pending.withUnsafeBytes { compress(blocks: $0) }
            pending.removeAll(keepingCapacity: true)
        }
        let whole = rest.count / 64 * 64
        if whole > 0 { compress(blocks: UnsafeRawBufferPointer(rebasing: rest.prefix(whole))) }
        pending += rest.dropFirst(whole)
    }

    /// The digest of everything fed (20 bytes).
    package consuming func finalize() -> [UInt8] {
        let bits = length &* 8
        // A 1 bit, zeros up to 56 mod 64, then the length in bits, big-endian.
        var padding: [UInt8] = [0x80] + [UInt8](repeating: 0, count: (119 - pending.count) % 64)
        padding += (0..<8).map { UInt8(truncatingIfNeeded: bits >> (56 - 8 * UInt64($0))) }
        let fed = length
        update(padding)
        length = fed
        precondition(pending.isEmpty, "SHA-1 padding left a partial block")
        return [h0, h1, h2, h3, h4].flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (24 - 8 * UInt32($0))) } }
    }

    /// The digest of everything fed, as 40 lowercase hexadecimal digits (git's form of an id).
    package consuming func finalizeHex() -> String {
        let digest = finalize()
        return String(unsafeUninitializedCapacity: 40) { out in
            // Built in place: `String(format:)` per byte made hashing a small conflict's id cost more than the hash.
            func digit(_ nibble: UInt8) -> UInt8 { nibble < 10 ? 0x30 + nibble : 0x57 + nibble }
            for (index, byte) in digest.enumerated() {
                out[2 * index] = digit(byte >> 4)
                out[2 * index + 1] = digit(byte & 0xF)
            }
            return 40
        }
    }

    /// Runs the compression function over each 64-byte block of `blocks` (a whole number of them).
    private mutating func compress(blocks: UnsafeRawBufferPointer) {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 80) { w in
            // A raw pointer, word loads and no ranges in the round loop: debug builds (the tests') hash five times
            // faster so than with checked buffers and a switch.
            let w = w.baseAddress!
            var offset = 0
            while offset < blocks.count {
                for t in 0..<16 { w[t] = UInt32(bigEndian: blocks.loadUnaligned(fromByteOffset: offset + 4 * t, as: UInt32.self)) }
                for t in 16..<80 {
                    let x = w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16]
                    w[t] = x << 1 | x >> 31
                }
                var a = h0, b = h1, c = h2, d = h3, e = h4
                var t = 0
                while t < 80 {
                    let f: UInt32, k: UInt32
                    if t < 20 {
                        f = d ^ (b & (c ^ d))
                        k = 0x5A82_7999
                    } else if t < 40 {
                        f = b ^ c ^ d
                        k = 0x6ED9_EBA1
                    } else if t < 60 {
                        f = (b & c) | (d & (b | c))
                        k = 0x8F1B_BCDC
                    } else {
                        f = b ^ c ^ d
                        k = 0xCA62_C1D6
                    }
                    let temp = (a << 5 | a >> 27) &+ f &+ e &+ k &+ w[t]
                    e = d
                    d = c
                    c = b << 30 | b >> 2
                    b = a
                    a = temp
                    t += 1
                }
                h0 &+= a
                h1 &+= b
                h2 &+= c
                h3 &+= d
                h4 &+= e
                offset += 64
            }
        }
    }
}
