/// The binary layout of what an encrypted hub holds: big-endian integers and length-prefixed byte strings, written
/// and read in one order, so that every field is where its reader expects it and nothing is parsed by guessing.
struct ByteFieldWriter {
    private(set) var bytes: [UInt8] = []

    mutating func raw(_ value: [UInt8]) { bytes += value }

    mutating func integer<Value: FixedWidthInteger>(_ value: Value) {
        withUnsafeBytes(of: value.bigEndian) { bytes += $0 }
    }

    /// A byte string of any length: its length (32 bits), then its bytes.
    mutating func field(_ value: [UInt8]) {
        integer(UInt32(value.count))
        bytes += value
    }

    mutating func text(_ value: String) { field(Array(value.utf8)) }
}

/// Reads what `ByteFieldWriter` wrote; every read past the end fails with the name of what was being read.
struct ByteFieldReader {
    private let bytes: [UInt8]
    private(set) var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { offset == bytes.count }
    var consumed: [UInt8] { Array(bytes[..<offset]) }
    var rest: [UInt8] { Array(bytes[offset...]) }

    mutating func raw(_ count: Int, _ what: String) throws(HubFormatError) -> [UInt8] {
        guard count >= 0, bytes.count - offset >= count else { throw HubFormatError("it ends inside its \(what)") }
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }

    mutating func integer<Value: FixedWidthInteger>(_ type: Value.Type, _ what: String) throws(HubFormatError) -> Value {
        try raw(MemoryLayout<Value>.size, what).reduce(Value.zero) { $0 << 8 | Value($1) }
    }

    mutating func field(_ what: String, atMost limit: Int = 1 << 30) throws(HubFormatError) -> [UInt8] {
        let count = Int(try integer(UInt32.self, what))
        guard count <= limit else { throw HubFormatError("its \(what) is longer than \(limit) bytes") }
        return try raw(count, what)
    }

    mutating func text(_ what: String) throws(HubFormatError) -> String {
        let value = try field(what, atMost: 4096)
        guard let text = String(validating: value, as: UTF8.self) else { throw HubFormatError("its \(what) is not UTF-8") }
        return text
    }

    /// A count of items that follow, each at least `minimumSize` bytes: a count the rest cannot hold fails here.
    mutating func count(_ what: String, minimumSize: Int) throws(HubFormatError) -> Int {
        let count = Int(try integer(UInt32.self, what))
        guard count * max(minimumSize, 1) <= bytes.count - offset else { throw HubFormatError("it lists more \(what) than it holds") }
        return count
    }
}

/// Why bytes on an encrypted hub are not what Truce writes there.
struct HubFormatError: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}
