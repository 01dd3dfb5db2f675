import Foundation

/// Writes a value tree as a binary property list (`bplist00`) whose bytes depend only on the tree.
///
/// Foundation's writer lays dictionary members out in hash order, which
/// changes from one process to the next; two replicas resolving the same
/// conflict must write the same bytes, so members here go in key byte order.
enum BinaryPropertyList {
    static func data(_ value: StructuredValue) throws(StructuredInputError) -> Data {
        let objects = try count(value)
        var writer = Writer(referenceSize: objects < 256 ? 1 : objects < 65_536 ? 2 : 4)
        _ = try writer.add(value)
        return writer.finish()
    }

    /// How many objects `value` writes: itself, and for a dictionary its keys too.
    private static func count(_ value: StructuredValue) throws(StructuredInputError) -> Int {
        switch value {
        case .object(let object):
            var total = 1 + object.members.count
            for member in object.members { total += try count(member.value) }
            return total
        case .array(let array):
            var total = 1
            for element in array.elements { total += try count(element) }
            return total
        case .null: throw StructuredInputError("null cannot be written in a property list")
        case .unresolved: throw StructuredInputError("a conflict cannot be written in a property list")
        default: return 1
        }
    }

    private struct Writer {
        let referenceSize: Int
        var objects: [[UInt8]] = []

        mutating func add(_ value: StructuredValue) throws(StructuredInputError) -> Int {
            let index = objects.count
            objects.append([])
            var bytes: [UInt8]
            switch value {
            case .object(let object):
                let members = object.members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
                var keys: [Int] = [], values: [Int] = []
                for member in members {
                    keys.append(try add(.string(member.key)))
                    values.append(try add(member.value))
                }
                bytes = Self.header(0xD0, count: members.count)
                for reference in keys + values { bytes += Self.bigEndian(UInt64(reference), size: referenceSize) }
            case .array(let array):
                var references: [Int] = []
                for element in array.elements { references.append(try add(element)) }
                bytes = Self.header(0xA0, count: references.count)
                for reference in references { bytes += Self.bigEndian(UInt64(reference), size: referenceSize) }
            case .string(let text, _):
                if text.utf8.allSatisfy({ $0 < 0x80 }) {
                    bytes = Self.header(0x50, count: text.utf8.count) + Array(text.utf8)
                } else {
                    let units = Array(text.utf16)
                    bytes = Self.header(0x60, count: units.count)
                    for unit in units { bytes += Self.bigEndian(UInt64(unit), size: 2) }
                }
            case .number(let text):
                if let integer = Int64(text) {
                    bytes = Self.integer(integer)
                } else if let unsigned = UInt64(text) {
                    bytes = [0x14] + Self.bigEndian(0, size: 8) + Self.bigEndian(unsigned, size: 8)
                } else if let real = Double(text) {
                    bytes = [0x23] + Self.bigEndian(real.bitPattern, size: 8)
                } else {
                    throw StructuredInputError("the number \(text) cannot be written in a property list")
                }
            case .real(let number): bytes = [0x23] + Self.bigEndian(number.bitPattern, size: 8)
            case .date(let date): bytes = [0x33] + Self.bigEndian(date.timeIntervalSinceReferenceDate.bitPattern, size: 8)
            case .data(let data): bytes = Self.header(0x40, count: data.count) + Array(data)
            case .bool(let flag): bytes = [flag ? 0x09 : 0x08]
            case .null, .unresolved: preconditionFailure("count(_:) refuses these first")
            }
            objects[index] = bytes
            return index
        }

        /// The trailer format of `bplist00`: object table, offset table, 32-byte trailer.
        func finish() -> Data {
            var output = Array("bplist00".utf8)
            var offsets: [Int] = []
            for object in objects {
                offsets.append(output.count)
                output += object
            }
            let tableOffset = output.count
            let offsetSize = tableOffset < 256 ? 1 : tableOffset < 65_536 ? 2 : tableOffset < 1 << 32 ? 4 : 8
            for offset in offsets { output += Self.bigEndian(UInt64(offset), size: offsetSize) }
            output += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(referenceSize)]
            output += Self.bigEndian(UInt64(objects.count), size: 8) + Self.bigEndian(0, size: 8) + Self.bigEndian(UInt64(tableOffset), size: 8)
            return Data(output)
        }

        private static func header(_ marker: UInt8, count: Int) -> [UInt8] {
            count < 15 ? [marker | UInt8(count)] : [marker | 0x0F] + integer(Int64(count))
        }

        private static func integer(_ value: Int64) -> [UInt8] {
            switch value {
            case 0..<256: [0x10] + bigEndian(UInt64(value), size: 1)
            case 256..<65_536: [0x11] + bigEndian(UInt64(value), size: 2)
            case 65_536..<(1 << 32): [0x12] + bigEndian(UInt64(value), size: 4)
            default: [0x13] + bigEndian(UInt64(bitPattern: value), size: 8)
            }
        }

        private static func bigEndian(_ value: UInt64, size: Int) -> [UInt8] {
            (0..<size).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64(size - 1 - $0))) }
        }
    }
}
