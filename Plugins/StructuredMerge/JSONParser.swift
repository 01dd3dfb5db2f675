import Foundation

/// Why a document cannot be merged by structure; the resolver passes with it.
package struct StructuredInputError: Error, Sendable, CustomStringConvertible {
    package let description: String
    init(_ description: String) { self.description = description }
}

/// How a JSON document was written, so a merge can write its result the same way.
struct JSONLayout: Equatable, Sendable {
    /// The indentation of one level (`"  "`, `"\t"`); nil when the document is on one line.
    var indent: String? = "  "
    /// What follows a member's colon: `" "` or nothing.
    var afterColon = " "
    /// What follows a comma between the items of a one-line container.
    var afterComma = " "
    /// `"\r\n"` when the document's lines end so, else `"\n"`.
    var newline = "\n"
    /// True when the document ends with a line break.
    var trailingNewline = true
    /// The whitespace before the document's value and after it, as read; nil for a layout made up, not read.
    var edges: (leading: [UInt8], trailing: [UInt8])? = nil

    static func == (lhs: JSONLayout, rhs: JSONLayout) -> Bool {
        (lhs.indent, lhs.afterColon, lhs.afterComma, lhs.newline, lhs.trailingNewline) == (
            rhs.indent, rhs.afterColon, rhs.afterComma, rhs.newline, rhs.trailingNewline
        )
            && lhs.edges?.leading == rhs.edges?.leading && lhs.edges?.trailing == rhs.edges?.trailing
    }
}

/// A strict JSON reader (RFC 8259) that keeps number text, string spelling and layout, down to every byte.
///
/// Each container records its whitespace (`ContainerLayout`) and each item
/// where it was read (`ItemSource`), each member its key's spelling, so that a
/// value written back unchanged is the bytes it was read from. It refuses what
/// a merge cannot carry over faithfully: a byte-order mark, strings that are
/// not valid UTF-8 (or escape a lone surrogate) and nesting `maximumDepth`
/// levels deep or more. Duplicate keys are read as they are (see `ObjectValue`).
struct JSONParser {
    /// Nesting at which a document is refused: deep enough for real data, shallow enough for the stack.
    static let maximumDepth = 64

    /// The document's bytes, valid while `parse` runs: a raw buffer, as the parser is the hot path of a large merge.
    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0
    private var layout = JSONLayout()
    private var sawColon = false
    private var sawInlineComma = false
    private var sawIndent = false

    /// Where the document's bytes and layout tables go.
    private let read: ReadDocument
    /// Separators and heads of the containers being read, innermost last: each moves to the tables whole when its
    /// container ends, so that every container's stand together there.
    private var pendingSeparators: [ReadDocument.Span] = []
    private var pendingHeads: [ReadDocument.Span] = []
    /// The document's tables, built here and handed to `read` once read whole (a class's arrays cost more to grow).
    private var containers: [ReadDocument.Container] = []
    private var separators: [ReadDocument.Span] = []
    private var heads: [ReadDocument.Span] = []

    private init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        read = ReadDocument(Array(bytes))
    }

    /// The bytes `start..<position`, without a copy for the commonest runs (none, one space).
    private func run(from start: Int) -> [UInt8] {
        switch position - start {
        case 0: return []
        case 1 where bytes[start] == 0x20: return Self.space
        default: return Array(bytes[start..<position])
        }
    }

    private static let space: [UInt8] = [0x20]

    private func span(_ start: Int, _ end: Int) -> ReadDocument.Span { ReadDocument.Span(start: UInt32(start), end: UInt32(end)) }

    /// Starts a container: its number, and where its pending separators and heads start.
    private mutating func beginContainer() -> (number: Int, separators: Int, heads: Int) {
        containers.append(ReadDocument.Container())
        return (containers.count - 1, pendingSeparators.count, pendingHeads.count)
    }

    /// Ends a container: its whitespace, and its separators and heads moved into the document's tables.
    private mutating func endContainer(
        _ started: (number: Int, separators: Int, heads: Int), opening: ReadDocument.Span, closing: ReadDocument.Span, items: Int
    ) {
        var record = ReadDocument.Container(opening: opening, closing: closing)
        record.itemCount = UInt32(items)
        record.firstSeparator = UInt32(separators.count)
        record.separatorCount = UInt32(pendingSeparators.count - started.separators)
        separators += pendingSeparators[started.separators...]
        pendingSeparators.removeSubrange(started.separators...)
        record.firstHead = UInt32(heads.count)
        heads += pendingHeads[started.heads...]
        pendingHeads.removeSubrange(started.heads...)
        containers[started.number] = record
    }

    /// Reads a whole document: one value, whitespace around it.
    static func parse(_ data: Data) throws(StructuredInputError) -> (value: StructuredValue, layout: JSONLayout) {
        // Offsets into the document are 32-bit; xdiff's own limit is lower.
        guard data.count < Int(UInt32.max) else { throw StructuredInputError("is too large to merge by structure") }
        let result = data.withUnsafeBytes { raw -> Result<(value: StructuredValue, layout: JSONLayout), StructuredInputError> in
            var parser = JSONParser(raw.bindMemory(to: UInt8.self))
            do throws(StructuredInputError) { return .success(try parser.document()) } catch { return .failure(error) }
        }
        return try result.get()
    }

    private mutating func document() throws(StructuredInputError) -> (value: StructuredValue, layout: JSONLayout) {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { throw StructuredInputError("starts with a byte-order mark, which JSON does not allow") }
        skipWhitespace()
        let leading = run(from: 0)
        let value = try parseValue(depth: 0)
        let valueEnd = position
        skipWhitespace()
        guard position == bytes.count else { throw failure("unexpected text after the JSON value") }
        layout.edges = (leading, run(from: valueEnd))
        (read.containers, read.separators, read.heads) = (containers, separators, heads)
        let bodyEnd = bytes.lastIndex { !Self.isWhitespace($0) } ?? 0
        if !bytes[..<bodyEnd].contains(UInt8(ascii: "\n")) { layout.indent = nil }
        layout.trailingNewline = bytes.last == UInt8(ascii: "\n")
        layout.newline = bytes.firstIndex(of: UInt8(ascii: "\n")).map { $0 > 0 && bytes[$0 - 1] == UInt8(ascii: "\r") } == true ? "\r\n" : "\n"
        return (value, layout)
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }

    private func failure(_ what: String) -> StructuredInputError {
        var line = 1, column = 1
        for byte in bytes[..<min(position, bytes.count)] {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else {
                column += 1
            }
        }
        return StructuredInputError("is not valid JSON: \(what) at line \(line), column \(column)")
    }

    /// Skips whitespace and reports whether it held a line break.
    @discardableResult
    private mutating func skipWhitespace() -> Bool {
        var sawNewline = false
        while position < bytes.count, Self.isWhitespace(bytes[position]) {
            if bytes[position] == UInt8(ascii: "\n") {
                sawNewline = true
                if !sawIndent { recordIndent(from: position + 1) }
            }
            position += 1
        }
        return sawNewline
    }

    private mutating func recordIndent(from start: Int) {
        var end = start
        while end < bytes.count, bytes[end] == 0x20 || bytes[end] == 0x09 { end += 1 }
        guard end > start, end < bytes.count, !Self.isWhitespace(bytes[end]) else { return }
        sawIndent = true
        layout.indent = String(decoding: bytes[start..<end], as: UTF8.self)
    }

    private mutating func parseValue(depth: Int) throws(StructuredInputError) -> StructuredValue {
        guard position < bytes.count else { throw failure("the document ends where a value should be") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""):
            let (text, source) = try parseString(keepingSource: true)
            return .string(text: text, source: source)
        case UInt8(ascii: "t"):
            try expect("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expect("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expect("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw failure("unexpected character")
        }
    }

    private mutating func expect(_ word: String) throws(StructuredInputError) {
        let expected = Array(word.utf8)
        guard bytes.count - position >= expected.count, Array(bytes[position..<position + expected.count]) == expected else {
            throw failure("unexpected word")
        }
        position += expected.count
    }

    private mutating func enter(_ depth: Int) throws(StructuredInputError) {
        if depth >= Self.maximumDepth {
            throw StructuredInputError("nests \(Self.maximumDepth) levels deep or more, deeper than a structured merge reads")
        }
    }

    private mutating func parseObject(depth: Int) throws(StructuredInputError) -> StructuredValue {
        try enter(depth)
        position += 1
        let started = beginContainer()
        let layout = ContainerLayout(document: read, number: started.number)
        var members: [ObjectValue.Member] = []
        let openingStart = position
        var multiline = skipWhitespace()
        let opening = span(openingStart, position)
        if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
            endContainer(started, opening: opening, closing: span(position, position), items: 0)
            position += 1
            return .object(ObjectValue(members: [], isInline: true, layout: layout))
        }
        while true {
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { throw failure("expected a member name in quotes") }
            let headStart = position
            let (key, _) = try parseString(keepingSource: false)
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { throw failure("expected ':' after a member name") }
            position += 1
            if !sawColon {
                sawColon = true
                self.layout.afterColon = position < bytes.count && bytes[position] == 0x20 ? " " : ""
            }
            skipWhitespace()
            pendingHeads.append(span(headStart, position))
            let value = try parseValue(depth: depth)
            let valueEnd = position
            multiline = skipWhitespace() || multiline
            guard position < bytes.count else { throw failure("the document ends inside an object") }
            members.append(ObjectValue.Member(key: key, value: value, source: ItemSource(container: layout, index: members.count)))
            if bytes[position] == UInt8(ascii: "}") {
                endContainer(started, opening: opening, closing: span(valueEnd, position), items: members.count)
                position += 1
                return .object(ObjectValue(members: members, isInline: !multiline, layout: layout))
            }
            guard bytes[position] == UInt8(ascii: ",") else { throw failure("expected ',' or '}'") }
            position += 1
            noteComma()
            multiline = skipWhitespace() || multiline
            pendingSeparators.append(span(valueEnd, position))
        }
    }

    private mutating func parseArray(depth: Int) throws(StructuredInputError) -> StructuredValue {
        try enter(depth)
        position += 1
        let started = beginContainer()
        // Element i is item i of the layout: no source of its own until a merge moves it.
        let layout = ContainerLayout(document: read, number: started.number)
        var elements: [StructuredValue] = []
        let openingStart = position
        var multiline = skipWhitespace()
        let opening = span(openingStart, position)
        if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
            endContainer(started, opening: opening, closing: span(position, position), items: 0)
            position += 1
            return .array(ArrayValue(elements: [], isInline: true, layout: layout))
        }
        while true {
            elements.append(try parseValue(depth: depth))
            let valueEnd = position
            multiline = skipWhitespace() || multiline
            guard position < bytes.count else { throw failure("the document ends inside an array") }
            if bytes[position] == UInt8(ascii: "]") {
                endContainer(started, opening: opening, closing: span(valueEnd, position), items: elements.count)
                position += 1
                return .array(ArrayValue(elements: elements, isInline: !multiline, layout: layout))
            }
            guard bytes[position] == UInt8(ascii: ",") else { throw failure("expected ',' or ']'") }
            position += 1
            noteComma()
            multiline = skipWhitespace() || multiline
            pendingSeparators.append(span(valueEnd, position))
        }
    }

    private mutating func noteComma() {
        guard !sawInlineComma, position < bytes.count, bytes[position] != 0x0A, bytes[position] != 0x0D else { return }
        sawInlineComma = true
        layout.afterComma = bytes[position] == 0x20 ? " " : ""
    }

    private mutating func parseNumber() throws(StructuredInputError) -> String {
        let start = position
        func digits() -> Int {
            let from = position
            while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) { position += 1 }
            return position - from
        }
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        guard position < bytes.count else { throw failure("a number without digits") }
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
        } else if digits() == 0 {
            throw failure("a number without digits")
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            position += 1
            guard digits() > 0 else { throw failure("a number with no digits after its decimal point") }
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") { position += 1 }
            guard digits() > 0 else { throw failure("a number with no digits in its exponent") }
        }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    /// Reads a string at the opening quote: its meaning and, when asked (member names need none), its exact spelling.
    private mutating func parseString(keepingSource: Bool) throws(StructuredInputError) -> (String, String) {
        let start = position
        position += 1
        // Most strings hold no escape: their text is their bytes.
        var end = position
        while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\"), bytes[end] >= 0x20 { end += 1 }
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            guard let text = String(validating: bytes[position..<end], as: UTF8.self) else {
                throw StructuredInputError("is not valid JSON: a string holds bytes that are not valid UTF-8")
            }
            position = end + 1
            return (text, keepingSource ? "\"" + text + "\"" : "")
        }
        var scalars = String.UnicodeScalarView()
        var runStart = position
        func flushRun(_ parser: JSONParser, upTo end: Int) throws(StructuredInputError) {
            guard runStart < end else { return }
            guard let text = String(validating: parser.bytes[runStart..<end], as: UTF8.self) else {
                throw StructuredInputError("is not valid JSON: a string holds bytes that are not valid UTF-8")
            }
            scalars.append(contentsOf: text.unicodeScalars)
        }
        while true {
            guard position < bytes.count else { throw failure("the document ends inside a string") }
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                try flushRun(self, upTo: position)
                position += 1
                return (String(scalars), String(decoding: bytes[start..<position], as: UTF8.self))
            }
            if byte < 0x20 { throw failure("a control character inside a string") }
            if byte != UInt8(ascii: "\\") {
                position += 1
                continue
            }
            try flushRun(self, upTo: position)
            position += 1
            guard position < bytes.count else { throw failure("the document ends inside a string") }
            let escaped = bytes[position]
            position += 1
            switch escaped {
            case UInt8(ascii: "\""): scalars.append("\"")
            case UInt8(ascii: "\\"): scalars.append("\\")
            case UInt8(ascii: "/"): scalars.append("/")
            case UInt8(ascii: "b"): scalars.append("\u{08}")
            case UInt8(ascii: "f"): scalars.append("\u{0C}")
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "t"): scalars.append("\t")
            case UInt8(ascii: "u"):
                let unit = try hexUnit()
                if (0xD800...0xDBFF).contains(unit) {
                    guard bytes.count - position >= 6, bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u") else {
                        throw failure("a string escapes a lone surrogate, which is not valid UTF-8")
                    }
                    position += 2
                    let low = try hexUnit()
                    guard (0xDC00...0xDFFF).contains(low) else { throw failure("a string escapes a lone surrogate, which is not valid UTF-8") }
                    scalars.append(Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))!)
                } else if let scalar = Unicode.Scalar(unit) {
                    scalars.append(scalar)
                } else {
                    throw failure("a string escapes a lone surrogate, which is not valid UTF-8")
                }
            default:
                throw failure("an unknown escape in a string")
            }
            runStart = position
        }
    }

    private mutating func hexUnit() throws(StructuredInputError) -> UInt32 {
        guard bytes.count - position >= 4 else { throw failure("a short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("a \\u escape with a character that is not hexadecimal")
            }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }
}
