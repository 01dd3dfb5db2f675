/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum iSCSI, ext4 and SQLite's WAL family use.
///
/// Slicing by eight: eight tables let each step fold in eight bytes.
package enum CRC32C {
    static let tables: [UInt32] = {
        var tables = [UInt32](repeating: 0, count: 8 * 256)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
            tables[byte] = crc
        }
        for table in 1..<8 {
            for byte in 0..<256 {
                let before = tables[(table - 1) * 256 + byte]
                tables[table * 256 + byte] = (before >> 8) ^ tables[Int(before & 0xFF)]
            }
        }
        return tables
    }()

    /// The CRC-32C of `bytes`, continuing from `crc`, the checksum of the bytes before them (0 for none).
    package static func checksum(_ bytes: ArraySlice<UInt8>, continuing crc: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { buffer in
            tables.withUnsafeBufferPointer { table in
                var crc = ~crc
                var index = 0
                while index + 8 <= buffer.count {
                    let word = UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                    let low = UInt32(truncatingIfNeeded: word) ^ crc, high = UInt32(truncatingIfNeeded: word >> 32)
                    crc =
                        table[7 * 256 + Int(low & 0xFF)] ^ table[6 * 256 + Int((low >> 8) & 0xFF)]
                        ^ table[5 * 256 + Int((low >> 16) & 0xFF)] ^ table[4 * 256 + Int(low >> 24)]
                        ^ table[3 * 256 + Int(high & 0xFF)] ^ table[2 * 256 + Int((high >> 8) & 0xFF)]
                        ^ table[256 + Int((high >> 16) & 0xFF)] ^ table[Int(high >> 24)]
                    index += 8
                }
                while index < buffer.count {
                    crc = table[Int((crc ^ UInt32(buffer[index])) & 0xFF)] ^ (crc >> 8)
                    index += 1
                }
                return ~crc
            }
        }
    }
}
