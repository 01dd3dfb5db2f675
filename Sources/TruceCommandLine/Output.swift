import Foundation
import Truce

/// Where a command writes: results to stdout, diagnostics to stderr, one line per error.
struct Output: Sendable {
    let writeOut: @Sendable (Data) -> Void
    let writeError: @Sendable (Data) -> Void
    /// The tool's name as it calls itself in errors, help and version lines: `truce`, or an app's own.
    var toolName = "truce"

    static let standard = Output(
        writeOut: { FileHandle.standardOutput.write($0) },
        writeError: { FileHandle.standardError.write($0) }
    )

    /// Prints `text` and a newline to stdout, control characters escaped (see `escapingControls`).
    func out(_ text: String) { writeOut(Data((Self.escapingControls(text) + "\n").utf8)) }

    /// Writes bytes to stdout unchanged.
    func raw(_ data: Data) { writeOut(data) }

    /// Prints `<tool>: <message>` as one line to stderr, control characters escaped.
    func error(_ message: String) {
        let line = Self.escapingControls(message.replacingOccurrences(of: "\n", with: " "))
        writeError(Data("\(toolName): \(line)\n".utf8))
    }

    /// Overwrites the progress line on stderr (a terminal's carriage return).
    func progress(_ message: String) {
        writeError(Data("\r\(toolName): \(Self.escapingControls(message))\u{1B}[K".utf8))
    }

    /// `text` with every control character except newline and tab written as `\x1B` (C0 and DEL) or `\u{9B}` (C1).
    ///
    /// Device names and messages arrive from other replicas and plain git
    /// commits; raw, an ESC or a BEL in them would drive the reader's
    /// terminal. Keys never hold control characters. JSON escapes them itself.
    static func escapingControls(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isEscaped) else { return text }
        var escaped = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            guard isEscaped(scalar) else {
                escaped.append(scalar)
                continue
            }
            let code = scalar.value < 0x80 ? String(format: "\\x%02X", scalar.value) : String(format: "\\u{%02X}", scalar.value)
            escaped.append(contentsOf: code.unicodeScalars)
        }
        return String(escaped)
    }

    private static func isEscaped(_ scalar: Unicode.Scalar) -> Bool {
        (scalar.value < 0x20 && scalar != "\n" && scalar != "\t") || (0x7F...0x9F).contains(scalar.value)
    }

    /// Prints `value` as pretty JSON with sorted keys and ISO 8601 dates; `oneLine` for a stream of one object per line.
    func json(_ value: some Encodable, oneLine: Bool = false) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = oneLine ? [.sortedKeys, .withoutEscapingSlashes] : [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(ISO8601.format(date))
        }
        writeOut(try encoder.encode(value) + Data("\n".utf8))
    }
}

/// One line describing a version for people: id, date, device and what kind of version it is.
func describe(_ version: Version) -> String {
    var kind = version.isDeletion ? "deletion" : "save"
    if let resolver = version.resolvedBy { kind = "resolution by \(resolver)" }
    if let reopened = version.reopened { kind = "reopening of \(reopened.short)" }
    return "\(version.id.hex)  \(ISO8601.format(version.modificationDate))  \(version.deviceName)  \(kind)"
}
