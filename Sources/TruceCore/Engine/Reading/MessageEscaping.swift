/// Any bytes written on one line of a commit message, and read back exactly: how decisions and restores name values,
/// places and devices.
///
/// Printable ASCII stays as it is, and so does UTF-8 text, so a value reads
/// as itself in `git show`; a backslash, a line feed, a tab and a carriage
/// return are `\\`, `\n`, `\t` and `\r`; every other byte is `\xHH`: control
/// characters, bytes that are not valid UTF-8, and the invisible characters
/// of a fixed list (bidirectional overrides, zero-width characters, tags),
/// which could make a line read as something it is not. The list is fixed
/// rather than read from the system's Unicode tables, so every replica writes
/// the same bytes for the same value and so the same resolution commit.
enum MessageEscaping {
    /// `bytes` escaped; with `quoted`, a double quote is `\"` too, and the result is between double quotes.
    static func escaped(_ bytes: some Collection<UInt8>, quoted: Bool = false) -> String {
        let bytes = Array(bytes)
        var out: [UInt8] = quoted ? [UInt8(ascii: "\"")] : []
        out.reserveCapacity(bytes.count + 2)
        var index = 0
        func hex(_ byte: UInt8) {
            let digits = Array("0123456789ABCDEF".utf8)
            out += [UInt8(ascii: "\\"), UInt8(ascii: "x"), digits[Int(byte >> 4)], digits[Int(byte & 0xF)]]
        }
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\\"): out += Array(#"\\"#.utf8)
            case UInt8(ascii: "\"") where quoted: out += Array(#"\""#.utf8)
            case 0x0A: out += Array(#"\n"#.utf8)
            case 0x09: out += Array(#"\t"#.utf8)
            case 0x0D: out += Array(#"\r"#.utf8)
            case 0x20..<0x7F: out.append(byte)
            case 0x80...:
                if let (scalar, length) = scalar(in: bytes, at: index), !isInvisible(scalar) {
                    out += bytes[index..<index + length]
                    index += length
                    continue
                }
                hex(byte)
            default: hex(byte)
            }
            index += 1
        }
        // A space that ends a line is one that tools trim: written so that it survives them.
        if !quoted, out.last == UInt8(ascii: " ") {
            out.removeLast()
            hex(UInt8(ascii: " "))
        }
        if quoted { out.append(UInt8(ascii: "\"")) }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of an escaped text (without quotes); nil when it holds an escape that `escaped` never writes or a raw
    /// control character.
    static func unescaped(_ text: some Collection<UInt8>) -> [UInt8]? {
        var reader = Reader(Array(text))
        return reader.read(until: nil)
    }

    /// A quoted text at the start of `bytes`: its bytes and what follows the closing quote; nil when there is none.
    static func unquoted(_ bytes: ArraySlice<UInt8>) -> (bytes: [UInt8], rest: ArraySlice<UInt8>)? {
        guard bytes.first == UInt8(ascii: "\"") else { return nil }
        var reader = Reader(Array(bytes.dropFirst()))
        guard let value = reader.read(until: UInt8(ascii: "\"")) else { return nil }
        return (value, ArraySlice(reader.remaining))
    }

    /// Reads escaped bytes up to an unescaped `terminator` (consumed), or to the end when it is nil.
    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var remaining: ArraySlice<UInt8> { bytes[index...] }

        mutating func read(until terminator: UInt8?) -> [UInt8]? {
            var out: [UInt8] = []
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                if byte == terminator { return out }
                if byte < 0x20 || byte == 0x7F { return nil }
                guard byte == UInt8(ascii: "\\") else {
                    out.append(byte)
                    continue
                }
                guard index < bytes.count else { return nil }
                let code = bytes[index]
                index += 1
                switch code {
                case UInt8(ascii: "\\"), UInt8(ascii: "\""): out.append(code)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "x"):
                    guard index + 2 <= bytes.count, let high = Self.hexValue(bytes[index]), let low = Self.hexValue(bytes[index + 1]) else {
                        return nil
                    }
                    out.append(high << 4 | low)
                    index += 2
                default: return nil
                }
            }
            return terminator == nil ? out : nil
        }

        private static func hexValue(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            default: nil
            }
        }
    }

    /// The scalar a valid UTF-8 sequence at `index` encodes (shortest form, no surrogates), with its length.
    private static func scalar(in bytes: [UInt8], at index: Int) -> (UInt32, Int)? {
        let lead = bytes[index]
        let length: Int
        var value: UInt32
        var low: UInt8 = 0x80, high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: (length, value) = (2, UInt32(lead & 0x1F))
        case 0xE0: (length, value, low) = (3, UInt32(lead & 0x0F), 0xA0)
        case 0xE1...0xEC, 0xEE...0xEF: (length, value) = (3, UInt32(lead & 0x0F))
        case 0xED: (length, value, high) = (3, UInt32(lead & 0x0F), 0x9F)
        case 0xF0: (length, value, low) = (4, UInt32(lead & 0x07), 0x90)
        case 0xF1...0xF3: (length, value) = (4, UInt32(lead & 0x07))
        case 0xF4: (length, value, high) = (4, UInt32(lead & 0x07), 0x8F)
        default: return nil
        }
        guard index + length <= bytes.count else { return nil }
        for offset in 1..<length {
            let byte = bytes[index + offset]
            // Only the first continuation byte has the narrower range that rules out overlong forms and surrogates.
            guard offset == 1 ? (low...high).contains(byte) : (0x80...0xBF).contains(byte) else { return nil }
            value = value << 6 | UInt32(byte & 0x3F)
        }
        return (value, length)
    }

    /// Characters that show nothing, or reorder what follows: C1 controls, the soft hyphen, the Arabic letter mark,
    /// the Mongolian vowel separator, zero-width and directional marks, line and paragraph separators, directional
    /// embeddings, overrides and isolates, invisible operators, the byte-order mark, interlinear annotation marks, tags.
    private static let invisible: [ClosedRange<UInt32>] = [
        0x80...0x9F, 0xAD...0xAD, 0x61C...0x61C, 0x180E...0x180E, 0x200B...0x200F, 0x2028...0x202E, 0x2060...0x206F,
        0xFEFF...0xFEFF, 0xFFF9...0xFFFB, 0xE0000...0xE007F,
    ]

    private static func isInvisible(_ scalar: UInt32) -> Bool { invisible.contains { $0.contains(scalar) } }
}
