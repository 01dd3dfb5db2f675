import Foundation

/// A JSON text read just far enough to edit it in place: where each value starts and ends, and an object's members.
///
/// The text must already be valid JSON (the caller parsed it): the scan only
/// follows strings and brackets. Writing an object back through
/// `rewritten(_:edits:additions:)` keeps every byte no edit touches: the
/// whitespace, the order of the members, the spelling of keys and values.
struct JSONSpans {
    let bytes: [UInt8]

    /// One member of an object: its key (decoded), and where its key and its value are.
    struct Member {
        let key: String
        /// The key with its quotes, as written.
        let keySpan: Range<Int>
        let valueSpan: Range<Int>
    }

    /// What to do with one member of an object.
    enum Edit {
        case value([UInt8])
        case remove
    }

    init(_ data: Data) { bytes = Array(data) }

    /// The document's value, without the whitespace around it.
    var root: Range<Int> {
        let start = skippingSpace(from: 0)
        return start..<valueEnd(from: start)
    }

    /// The members of the object at `span`, in order; nil when the value there is not an object.
    func members(of span: Range<Int>) -> [Member]? {
        guard bytes[span.lowerBound] == UInt8(ascii: "{") else { return nil }
        var members: [Member] = []
        var index = skippingSpace(from: span.lowerBound + 1)
        while bytes[index] != UInt8(ascii: "}") {
            let keyEnd = stringEnd(from: index)
            let valueStart = skippingSpace(from: skippingSpace(from: keyEnd) + 1)  // past the colon
            let end = valueEnd(from: valueStart)
            members.append(Member(key: Self.decodedString(bytes[index..<keyEnd]), keySpan: index..<keyEnd, valueSpan: valueStart..<end))
            index = skippingSpace(from: end)
            if bytes[index] == UInt8(ascii: ",") { index = skippingSpace(from: index + 1) }
        }
        return members
    }

    /// The value at `span` as compact JSON with sorted keys: equal for values equal in meaning, however written.
    func canonical(_ span: Range<Int>) -> Data {
        guard let value = try? JSONSerialization.jsonObject(with: Data(bytes[span]), options: .fragmentsAllowed),
            let data = try? JSONSerialization.data(withJSONObject: [value], options: [.sortedKeys, .withoutEscapingSlashes])
        else { return Data(bytes[span]) }
        return Data(data.dropFirst().dropLast())
    }

    /// The object at `span` written back with `edits` (by member index) made and `additions` put after its members.
    func rewritten(_ span: Range<Int>, edits: [Int: Edit], additions: [(key: ArraySlice<UInt8>, value: [UInt8])]) -> [UInt8] {
        let members = members(of: span) ?? []
        let (open, close) = (span.lowerBound, span.upperBound - 1)
        let leading = members.first.map { bytes[(open + 1)..<$0.keySpan.lowerBound] } ?? bytes[(open + 1)..<close]
        let trailing = members.last.map { bytes[$0.valueSpan.upperBound..<close] } ?? []
        // What an added member follows: the object's own separator, else one like its opening's whitespace.
        let separator: [UInt8] =
            members.count >= 2
            ? Array(bytes[members[0].valueSpan.upperBound..<members[1].keySpan.lowerBound])
            : leading.contains(0x0A) ? [UInt8(ascii: ",")] + leading : Array(", ".utf8)
        let colon = members.first.map { Array(bytes[$0.keySpan.upperBound..<$0.valueSpan.lowerBound]) } ?? Array(": ".utf8)
        var pieces: [(bytes: [UInt8], separatorAfter: [UInt8]?)] = []
        for (index, member) in members.enumerated() {
            let after = index + 1 < members.count ? Array(bytes[member.valueSpan.upperBound..<members[index + 1].keySpan.lowerBound]) : nil
            switch edits[index] {
            case .remove?: continue
            case .value(let value)?: pieces.append((Array(bytes[member.keySpan.lowerBound..<member.valueSpan.lowerBound]) + value, after))
            case nil: pieces.append((Array(bytes[member.keySpan.lowerBound..<member.valueSpan.upperBound]), after))
            }
        }
        for addition in additions { pieces.append((Array(addition.key) + colon + addition.value, nil)) }
        var out: [UInt8] = [UInt8(ascii: "{")] + leading
        for (index, piece) in pieces.enumerated() {
            if index > 0 { out += pieces[index - 1].separatorAfter ?? separator }
            out += piece.bytes
        }
        return out + trailing + [UInt8(ascii: "}")]
    }

    private func skippingSpace(from start: Int) -> Int {
        var index = start
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        return index
    }

    /// The index after the string whose opening quote is at `start`.
    private func stringEnd(from start: Int) -> Int {
        var index = start + 1
        while bytes[index] != UInt8(ascii: "\"") {
            if bytes[index] == UInt8(ascii: "\\") { index += 1 }
            index += 1
        }
        return index + 1
    }

    /// The index after the value that starts at `start`.
    private func valueEnd(from start: Int) -> Int {
        switch bytes[start] {
        case UInt8(ascii: "\""):
            return stringEnd(from: start)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            var index = start
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    index = stringEnd(from: index)
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { return index + 1 }
                default: break
                }
                index += 1
            }
            return index
        default:
            var index = start
            while index < bytes.count, ![0x20, 0x09, 0x0A, 0x0D, 0x2C, 0x5D, 0x7D].contains(bytes[index]) { index += 1 }
            return index
        }
    }

    private static func decodedString(_ quoted: ArraySlice<UInt8>) -> String {
        (try? JSONSerialization.jsonObject(with: Data(quoted), options: .fragmentsAllowed) as? String) ?? String(decoding: quoted, as: UTF8.self)
    }
}
