import Foundation

/// Conflict markers as a file handed to a person or a tool holds them: their size, chosen longer than any
/// marker-like line already in the text, and the check that none is left.
struct ConflictMarkers: Sendable, Equatable {
    /// The number of `<`, `=`, `|` or `>` a marker has: 7, as git writes them, or one more than the longest run
    /// that starts a line of `texts`.
    let size: Int

    init(size: Int = 7) { self.size = size }

    /// Markers that cannot be mistaken for a line already in `texts`.
    init(avoiding texts: [Data?]) {
        var longest = 0
        for text in texts.compactMap({ $0 }) {
            for line in text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
                guard let first = line.first, Self.markerBytes.contains(first) else { continue }
                longest = max(longest, line.prefix { $0 == first }.count)
            }
        }
        size = max(7, longest + 1)
    }

    private static let markerBytes: Set<UInt8> = [UInt8(ascii: "<"), UInt8(ascii: "="), UInt8(ascii: "|"), UInt8(ascii: ">")]

    /// The line number (from 1) of the first marker of this size left in `text`; nil when there is none.
    ///
    /// A marker is exactly `size` of one character at the start of a line,
    /// followed by a space or the end of the line, as git writes them and
    /// `git diff --check` finds them.
    func firstMarker(in text: Data) -> Int? {
        for (index, line) in text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
            var line = Array(line)
            if line.last == UInt8(ascii: "\r") { line.removeLast() }
            guard let first = line.first, Self.markerBytes.contains(first), line.count >= size else { continue }
            guard line.prefix(size).allSatisfy({ $0 == first }) else { continue }
            let rest = line.dropFirst(size)
            if rest.isEmpty || rest.first == UInt8(ascii: " ") { return index + 1 }
        }
        return nil
    }

    /// `sides` (a label and a text each) and the base between markers of this size: the first side after `<<<<<<<`,
    /// the base after `|||||||`, each other side after `=======` with its label, then `>>>>>>>`. What a person edits
    /// down to the text they want.
    func draw(sides: [(label: String, text: Data?)], base: (label: String, text: Data?)?, end: String) -> Data {
        func marker(_ character: Character, _ label: String) -> Data {
            Data((String(repeating: character, count: size) + " " + label + "\n").utf8)
        }
        func body(_ text: Data?) -> Data {
            guard var text, !text.isEmpty else { return Data() }
            if text.last != UInt8(ascii: "\n") { text.append(UInt8(ascii: "\n")) }
            return text
        }
        var result = Data()
        for (index, side) in sides.enumerated() {
            result += marker(index == 0 ? "<" : "=", side.label) + body(side.text)
            if index == 0, let base { result += marker("|", base.label) + body(base.text) }
        }
        return result + marker(">", end)
    }
}
