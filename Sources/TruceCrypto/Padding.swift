internal import CSodium

/// ISO/IEC 7816-4 padding (`sodium_pad`): a 0x80 byte, then zeros up to a multiple of the block size.
package enum Padding {
    /// `bytes` padded to the next multiple of `blockSize` (a whole block more when they fill the last one).
    package static func pad(_ bytes: [UInt8], toMultipleOf blockSize: Int) -> [UInt8] {
        Sodium.ready()
        precondition(blockSize > 0)
        var padded = bytes + [UInt8](repeating: 0, count: blockSize)
        var length = 0
        _ = sodium_pad(&length, &padded, bytes.count, blockSize, padded.count)
        padded.removeLast(padded.count - length)
        return padded
    }

    /// The bytes `pad` padded.
    package static func unpad(_ padded: [UInt8], blockSize: Int) throws(CryptoError) -> [UInt8] {
        Sodium.ready()
        var length = 0
        guard blockSize > 0, sodium_unpad(&length, padded, padded.count, blockSize) == 0 else {
            throw .malformed("its padding is not ISO/IEC 7816-4's")
        }
        return Array(padded[..<length])
    }

    /// The block to pad a message of `count` bytes to so that its size says little: at least 4 KiB, and a sixteenth
    /// of the next power of two above, so padding never adds more than about a sixteenth.
    package static func bucket(for count: Int) -> Int {
        let power = 1 << max(12, (Int.bitWidth - max(count, 1).leadingZeroBitCount))
        return max(4096, power / 16)
    }
}
