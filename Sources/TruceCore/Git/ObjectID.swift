import CLibgit2

/// A git object id (SHA-1), the identity of every version.
public struct ObjectID: Hashable, Comparable, Sendable, CustomStringConvertible, Codable {
    /// The 20 raw bytes.
    public let bytes: [UInt8]

    init(_ oid: git_oid) {
        var oid = oid
        bytes = withUnsafeBytes(of: &oid.id) { Array($0) }
    }

    /// The id whose 20 raw bytes are `raw` (as a pack index lists them).
    init(bytes raw: ArraySlice<UInt8>) {
        precondition(raw.count == 20, "an object id is 20 bytes")
        bytes = Array(raw)
    }

    /// Parses a full 40-character hexadecimal id; nil when it is not one.
    public init?(hex: String) {
        self.init(hexBytes: hex.utf8)
    }

    /// Parses 40 hexadecimal digits given as bytes (a line of a git file); nil when they are not.
    init?<Digits: Collection<UInt8>>(hexBytes digits: Digits) {
        guard digits.count == 40 else { return nil }
        var raw: [UInt8] = []
        raw.reserveCapacity(20)
        var high: UInt8?
        for character in digits {
            guard let nibble = Self.nibble(character) else { return nil }
            if let value = high { raw.append(value << 4 | nibble); high = nil } else { high = nibble }
        }
        bytes = raw
    }

    /// The 40-character lowercase hexadecimal form that git prints.
    public var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(40)
        for byte in bytes { out.append(digits[Int(byte >> 4)]); out.append(digits[Int(byte & 0xF)]) }
        return String(decoding: out, as: UTF8.self)
    }

    /// The first seven hexadecimal digits, as `git log --oneline` shows them.
    public var short: String { String(hex.prefix(7)) }

    public var description: String { hex }

    public static func < (lhs: ObjectID, rhs: ObjectID) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }

    var raw: git_oid {
        var oid = git_oid()
        withUnsafeMutableBytes(of: &oid.id) { $0.copyBytes(from: bytes) }
        return oid
    }

    public init(from decoder: Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let id = ObjectID(hex: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not an object id: \(text)"))
        }
        self = id
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hex)
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
