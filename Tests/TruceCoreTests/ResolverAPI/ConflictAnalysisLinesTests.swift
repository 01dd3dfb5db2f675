import Foundation
import Testing

@testable import TruceCore

/// How `ConflictAnalysis` splits text into lines: after each newline, a last line without one kept, whatever the
/// `Data` it is given (a slice of a larger buffer included), and nothing lost or added.
@Suite(.timeLimit(.minutes(10))) struct ConflictAnalysisLinesTests {
    /// The split a byte-by-byte reading gives.
    static func expected(_ data: Data) -> [Data] {
        var lines: [Data] = []
        var line = Data()
        for byte in data {
            line.append(byte)
            if byte == UInt8(ascii: "\n") {
                lines.append(line)
                line = Data()
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }

    @Test(arguments: ["", "\n", "\n\n", "one", "one\n", "one\ntwo", "one\ntwo\n", "a\r\nb\r\n", "\u{0}\n\u{0}", "x\n\n\ny"])
    func splitsAfterEachNewline(text: String) {
        let data = Data(text.utf8)
        let lines = ConflictAnalysis.lines(of: data)
        #expect(lines == Self.expected(data))
        #expect(lines.reduce(into: Data()) { $0.append($1) } == data)
    }

    /// A slice does not start at index 0: the lines are still the slice's own bytes.
    @Test func splitsASliceOfALargerBuffer() {
        let whole = Data("skip\nfirst\nsecond\nthird".utf8)
        let slice = whole[whole.startIndex + 5..<whole.endIndex - 2]
        let lines = ConflictAnalysis.lines(of: slice)
        #expect(lines.map { String(decoding: $0, as: UTF8.self) } == ["first\n", "second\n", "thi"])
        #expect(lines == Self.expected(slice))
    }
}
