import Foundation
import TestSupport
import Testing

/// `truce resolve -i` with standard input that is not a terminal: one answer per line, scriptable.
@Suite(.timeLimit(.minutes(10)))
struct LineModeResolverTests {
    @Test func aScriptAnswersPointByPointAndWritesTheCommitTakeWrites() throws {
        let store = try CLIStore()
        let saved = try store.saveConflict("notes/todo.md", base: .text(InteractiveResolverTests.base), heads: InteractiveResolverTests.heads)
        let twin = TemporaryDirectory("truce-twin")
        #expect(try Tmux.spawn(["cp", "-a", store.path, twin.file("store")]).status == 0)
        // A wrong word is said and asked again; undo takes the first answer back.
        let result = try store.run(
            ["resolve", "-i", "notes/todo.md", "--device", "person"], input: .text("\(saved.heads[1])\nundo\nbogus\n\(saved.heads[0])\nboth\n"))
        #expect(result.status == 0, "\(result.errorOutput)")
        #expect(result.output.contains("H1 [ours|theirs|base|both") && result.output.contains("unknown choice 'bogus'"), "\(result.output)")
        #expect(result.output.contains("| 5\\x1B[2J"), "content from other replicas is escaped: \(result.output)")
        let written = try #require(result.output.split(separator: "\n").last.map { String($0.split(separator: " ").last!) })
        let taken = try truce(
            ["resolve", "notes/todo.md", "--take", "H1=\(saved.heads[0])", "--take", "H2=both", "--device", "person"], store: twin.file("store"))
        #expect(taken.output == "resolved notes/todo.md with person: \(written)\n", "\(taken.output)")
    }

    @Test func theEndOfInputWritesNothingAndParkKeepsTheAnswers() throws {
        let store = try CLIStore()
        try store.saveConflict("notes/todo.md", base: .text(InteractiveResolverTests.base), heads: InteractiveResolverTests.heads)
        let before = try refsAndObjects(ofStore: store.path)
        let ended = try store.run(["resolve", "-i", "notes/todo.md"], input: .text("ours\n"))
        #expect(ended.status == 1 && ended.output.hasSuffix("notes/todo.md: nothing written; 1 of 2 points open\n"), "\(ended.output)")
        #expect(try refsAndObjects(ofStore: store.path) == before)
        let parked = try store.run(["resolve", "-i", "notes/todo.md", "--device", "laptop"], input: .text("ours\npark\n"))
        #expect(parked.status == 1 && parked.output.contains("parked notes/todo.md with 1 of 2 points answered"), "\(parked.output)")
        let resumed = try store.run(["resolve", "-i", "notes/todo.md"], input: .text("both\n"))
        #expect(resumed.status == 0 && resumed.output.hasPrefix("continued the session parked by laptop"), "\(resumed.output)")
    }

    /// `-i --all` goes document after document, and each one written is the commit `--take` writes for its answers.
    @Test func allDocumentsAreAnsweredOneAfterAnotherAsTakeWouldWriteThem() throws {
        let store = try CLIStore()
        let base = Data("one\ntwo\n".utf8)
        try store.saveConflict("a.md", base: base, heads: [("laptop", .text("ONE\ntwo\n")), ("phone", .text("uno\ntwo\n"))])
        try store.saveConflict("b.md", base: base, heads: [("laptop", .text("one\nTWO\n")), ("phone", .text("one\ndos\n"))])
        let twin = TemporaryDirectory("truce-twin")
        #expect(try Tmux.spawn(["cp", "-a", store.path, twin.file("store")]).status == 0)
        let result = try store.run(["resolve", "-i", "--all", "--device", "person"], input: .text("ours\ntheirs\n"))
        #expect(result.status == 0, "\(result.errorOutput)")
        // Each "resolved …" line follows the last prompt of its document on the same line.
        let written = result.output.split(separator: "\n").compactMap { line in line.range(of: "resolved ").map { String(line[$0.lowerBound...]) } }
        #expect(written.count == 2, "\(result.output)")
        for (key, choice) in [("a.md", "ours"), ("b.md", "theirs")] {
            let taken = try truce(["resolve", key, "--take", "H1=\(choice)", "--device", "person"], store: twin.file("store"))
            #expect(written.contains(taken.output.trimmingCharacters(in: .newlines)), "\(key): \(taken.output) not in \(written)")
        }
        #expect(try store.run(["status"]).output == "no documents in conflict\n")
    }

    @Test func helpResolveShowsTheKeysTheToolsAndTheExitCodes() throws {
        let help = try truce(["help", "resolve"])
        #expect(help.status == 0 && help.output.contains("--interactive, -i") && help.output.contains("mergetool.NAME.cmd"), "\(help.output)")
        #expect(help.output.contains("  e            edit the point in $VISUAL or $EDITOR") && help.output.contains("Exit codes: 0 written"))
    }
}
