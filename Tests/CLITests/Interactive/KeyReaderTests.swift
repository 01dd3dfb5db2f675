import Foundation
import Testing

@testable import TruceCommandLine

/// Keys as terminals send them.
@Suite(.timeLimit(.minutes(10)))
struct KeyReaderTests {
    @Test func keysAreReadFromWhatTerminalsSend() {
        #expect(Key.parse([0x1B, 0x5B, 0x41]) == .up && Key.parse([0x1B, 0x5B, 0x36, 0x7E]) == .pageDown)
        #expect(Key.parse([0x03]) == .control("c") && Key.parse([0x0D]) == .enter && Key.parse(Array("é".utf8)) == .character("é"))
        #expect(KeyReader.firstKey(of: [0x1B, 0x5B, 0x42, 0x71]) == [0x1B, 0x5B, 0x42] && KeyReader.firstKey(of: Array("ab".utf8)) == [0x61])
    }
}
