import Foundation
import TestSupport
import Testing

/// `truce rerere` and the answers it shows: recorded by `resolve --take`, replayed by `resolve`, said by `explain`.
@Suite(.timeLimit(.minutes(10)))
struct RerereCommandTests {
    static let base = "one\ntwo\nthree\n"
    static let heads: [(device: String, content: Data)] = [("laptop", .text("one\nTWO\nthree\n")), ("phone", .text("one\n2\nthree\n"))]

    @Test func anAnswerGivenOnceIsShownExplainedReplayedAndForgotten() throws {
        let store = try CLIStore()
        try store.saveConflict("a.md", base: .text(Self.base), heads: Self.heads)
        #expect(try store.run("resolve", "a.md", "--take", "H1=both-reversed", "--device", "ada").status == 0)
        #expect(try store.run("cat", "a.md").output == "one\nTWO\n2\nthree\n")

        try store.saveConflict("b.md", base: .text(Self.base), heads: Self.heads)
        let status = try store.run("rerere", "status")
        #expect(status.status == 0 && status.output.hasPrefix("b.md: ") && status.output.contains("recorded by ada"), "\(status.output)")
        let diff = try store.run("rerere", "diff")
        #expect(diff.output.contains("--- preimage\n<<<<<<<\n2\n=======\nTWO\n>>>>>>>\n+++ postimage\nTWO\n2\n"), "\(diff.output)")
        let explained = try store.run("explain", "b.md")
        #expect(
            explained.output.contains("recorded answer: ") && explained.output.contains("outcome: recorded-answer would resolve it"),
            "\(explained.output)")

        let resolved = try store.run("resolve", "b.md", "--device", "laptop")
        #expect(resolved.status == 0 && resolved.output.hasPrefix("resolved b.md with recorded-answer: "), "\(resolved.output)")
        #expect(try store.run("cat", "b.md").output == "one\nTWO\n2\nthree\n")

        try store.saveConflict("c.md", base: .text(Self.base), heads: Self.heads)
        let forgot = try store.run("rerere", "forget", "c.md")
        #expect(forgot.status == 0 && forgot.output.hasPrefix("forgot "), "\(forgot.output)")
        #expect(try store.run("resolve", "c.md").status == 1, "a forgotten answer was replayed")
        #expect(try store.gitInStore("fsck", "--strict").status == 0)
    }

    @Test func badWordsAreOneLineAndChangeNothing() throws {
        let store = try CLIStore()
        try store.saveConflict("a.md", base: .text(Self.base), heads: Self.heads)
        let before = snapshot(ofStore: store.path)
        for words in [["rerere", "bogus"], ["rerere", "forget", "0000"], ["rerere", "forget"]] {
            let result = try store.run(words)
            #expect(
                result.status == 2 && result.errorLines.count == 1 && result.errorLines[0].hasPrefix("truce: "), "\(words): \(result.errorOutput)")
        }
        #expect(snapshot(ofStore: store.path) == before)
    }
}
