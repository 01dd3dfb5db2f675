import Foundation
import Testbed

/// 20-byte object ids with every byte value in every position: random ones, and the all-zero, all-0xff and one-bit ones.
public func objectIDByteSamples() -> [[UInt8]] {
    var random = SeededRandom(seed: 0x1D)
    var samples = (0..<200).map { _ in (0..<20).map { _ in UInt8(truncatingIfNeeded: random.next()) } }
    samples += [[UInt8](repeating: 0, count: 20), [UInt8](repeating: 0xFF, count: 20)]
    samples += (0..<160).map { bit in (0..<20).map { $0 == bit / 8 ? UInt8(0x80) >> UInt8(bit % 8) : 0 } }
    return samples
}
