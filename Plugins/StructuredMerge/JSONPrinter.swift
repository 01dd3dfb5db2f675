import Foundation

/// Writes a value as JSON: what was read is written back byte for byte, what a merge made is laid out like its
/// surroundings, and unresolved values become git conflict markers around the members they cover.
///
/// A container read from JSON (it has a `ContainerLayout`) is written with its
/// own whitespace, each item with the bytes that followed it where it was read
/// when the next item followed it there too (`ItemSource`), and each member with
/// its key's spelling. Only a container that holds a conflict, at any depth, is
/// laid out line by line from `JSONLayout`, as conflict markers must start lines.
struct JSONPrinter {
    /// Labels, length and style of conflict markers, as `git merge-file` writes them.
    struct Markers {
        var size = 7
        var oursLabel = "ours"
        var baseLabel = "base"
        var theirsLabel = "theirs"
        /// True shows the base's value between `|||||||` and `=======` (git's diff3 and zdiff3 styles).
        var showsBase = false
    }

    let layout: JSONLayout
    var markers = Markers()
    private var output: [UInt8] = []

    init(layout: JSONLayout, markers: Markers = Markers()) {
        self.layout = layout
        self.markers = markers
    }

    /// The whole document, with the whitespace it was read with around it (else a line break when the layout has one).
    static func document(_ value: StructuredValue, layout: JSONLayout, markers: Markers = Markers()) -> Data {
        var printer = JSONPrinter(layout: layout, markers: markers)
        let isConflict = if case .unresolved = value { true } else { false }
        if let edges = layout.edges, !isConflict { printer.output += edges.leading }
        printer.write(value, depth: 0, inline: layout.indent == nil, conflictFree: !holdsConflict(value))
        // A conflict over the whole document starts with its marker line, not a line break before it.
        if isConflict { printer.output.removeFirst(layout.newline.utf8.count) }
        if let edges = layout.edges, !isConflict {
            printer.output += edges.trailing
        } else if layout.trailingNewline {
            printer.append(layout.newline)
        }
        return Data(printer.output)
    }

    /// A string's JSON spelling: quotes, and escapes only where JSON requires them.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    private mutating func append(_ text: String) { output.append(contentsOf: text.utf8) }

    private mutating func newline(depth: Int) {
        append(layout.newline)
        if let indent = layout.indent { for _ in 0..<depth { append(indent) } }
    }

    /// Writes `value`; `conflictFree` says it is known to hold no conflict, which spares looking.
    private mutating func write(_ value: StructuredValue, depth: Int, inline: Bool, conflictFree: Bool = false) {
        switch value {
        case .object(let object):
            if let containerLayout = object.layout, conflictFree || !Self.holdsConflict(value) {
                append("{")
                output += containerLayout.opening
                for (index, member) in object.members.enumerated() {
                    if index > 0 {
                        output += containerLayout.separator(
                            between: object.members[index - 1].source, and: member.source, afterComma: layout.afterComma)
                    }
                    if let source = member.source {
                        output += source.head
                    } else {
                        append(Self.quoted(member.key) + ":" + layout.afterColon)
                    }
                    write(member.value, depth: depth + 1, inline: false, conflictFree: true)
                }
                if !object.members.isEmpty { output += containerLayout.closing }
                append("}")
                return
            }
            let items = object.members.map { member in (key: Optional(member.key), value: member.value) }
            writeContainer(open: "{", close: "}", items: items, depth: depth, inline: inline || object.isInline)
        case .array(let array):
            if let containerLayout = array.layout, conflictFree || !Self.holdsConflict(value) {
                append("[")
                output += containerLayout.opening
                var previous: ItemSource?
                for (index, element) in array.elements.enumerated() {
                    let source = array.source(index)
                    if index > 0 { output += containerLayout.separator(between: previous, and: source, afterComma: layout.afterComma) }
                    write(element, depth: depth + 1, inline: false, conflictFree: true)
                    previous = source
                }
                if !array.elements.isEmpty { output += containerLayout.closing }
                append("]")
                return
            }
            writeContainer(
                open: "[", close: "]", items: array.elements.map { (key: String?.none, value: $0) }, depth: depth,
                inline: inline || array.isInline)
        case .string(_, let source): append(source)
        case .number(let text): append(text)
        case .bool(let flag): append(flag ? "true" : "false")
        case .null: append("null")
        case .real(let number): append(number.isFinite ? "\(number)" : "null")
        case .date(let date): append(Self.quoted(ISO8601DateFormatter().string(from: date)))
        case .data(let data): append(Self.quoted(data.base64EncodedString()))
        case .unresolved(let conflict):
            writeMarked(conflict, key: nil, depth: depth, comma: false)
        }
    }

    /// True when `value` holds an unresolved value at any depth.
    private static func holdsConflict(_ value: StructuredValue) -> Bool {
        switch value {
        case .unresolved: true
        case .object(let object): object.members.contains { holdsConflict($0.value) }
        case .array(let array): array.elements.contains(where: holdsConflict)
        default: false
        }
    }

    private mutating func writeContainer(open: String, close: String, items: [(key: String?, value: StructuredValue)], depth: Int, inline: Bool) {
        append(open)
        guard !items.isEmpty else {
            append(close)
            return
        }
        // Conflict markers must start lines, so a container holding one is laid out over lines.
        let hasMarkers = items.contains { if case .unresolved = $0.value { true } else { false } }
        let oneLine = inline && !hasMarkers
        for (index, item) in items.enumerated() {
            let isLast = index == items.count - 1
            if case .unresolved(let conflict) = item.value {
                writeMarked(conflict, key: item.key, depth: depth + 1, comma: !isLast)
                continue
            }
            if oneLine {
                if index > 0 { append(layout.afterComma) }
            } else {
                newline(depth: depth + 1)
            }
            writeItem(key: item.key, value: item.value, depth: depth + 1, inline: inline)
            if !isLast { append(",") }
        }
        if oneLine {
            append(close)
        } else {
            newline(depth: depth)
            append(close)
        }
    }

    private mutating func writeItem(key: String?, value: StructuredValue, depth: Int, inline: Bool) {
        if let key {
            append(Self.quoted(key))
            append(":" + layout.afterColon)
        }
        write(value, depth: depth, inline: inline)
    }

    /// `<<<<<<< ours`, our member, (`||||||| base`, the base's,) `=======`, theirs, `>>>>>>> theirs`, each on its own line.
    private mutating func writeMarked(_ conflict: UnresolvedValue, key: String?, depth: Int, comma: Bool) {
        let expanded =
            layout.indent == nil
            ? JSONLayout(
                indent: "  ", afterColon: layout.afterColon, afterComma: layout.afterComma,
                newline: layout.newline, trailingNewline: false) : layout
        var inner = JSONPrinter(layout: expanded, markers: markers)
        func side(_ value: StructuredValue?, into printer: inout JSONPrinter) {
            guard let value else { return }
            printer.newline(depth: depth)
            printer.writeItem(key: key, value: value, depth: depth, inline: false)
            if comma { printer.append(",") }
        }
        inner.append(layout.newline + String(repeating: "<", count: markers.size) + " " + markers.oursLabel)
        side(conflict.ours, into: &inner)
        if markers.showsBase {
            inner.append(layout.newline + String(repeating: "|", count: markers.size) + " " + markers.baseLabel)
            side(conflict.base, into: &inner)
        }
        inner.append(layout.newline + String(repeating: "=", count: markers.size))
        side(conflict.theirs, into: &inner)
        inner.append(layout.newline + String(repeating: ">", count: markers.size) + " " + markers.theirsLabel)
        output += inner.output
    }
}
