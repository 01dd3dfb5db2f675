import Foundation
import Truce

/// Where a command writes: results to stdout, diagnostics to stderr, one line per error.
struct Output: Sendable {
    let writeOut: @Sendable (Data) -> Void
    let writeError: @Sendable (Data) -> Void

    static let standard = Output(
        writeOut: { FileHandle.standardOutput.write($0) },
        writeError: { FileHandle.standardError.write($0) }
    )

    /// Prints `text` and a newline to stdout.
    func out(_ text: String) { writeOut(Data((text + "\n").utf8)) }

    /// Writes bytes to stdout unchanged.
    func raw(_ data: Data) { writeOut(data) }

    /// Prints `truce: <message>` as one line to stderr.
    func error(_ message: String) {
        let line = message.replacingOccurrences(of: "\n", with: " ")
        writeError(Data("truce: \(line)\n".utf8))
    }

    /// Overwrites the progress line on stderr (a terminal's carriage return).
    func progress(_ message: String) {
        writeError(Data("\rtruce: \(message)\u{1B}[K".utf8))
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
