import Foundation
import TestSupport
import Testing

/// `truce resolve -i` driven in tmux as a person drives it: keys in, the screen read back, the commit checked with git.
@Suite(.timeLimit(.minutes(10)))
struct InteractiveResolverTests {
    static let base = "one\ntwo\nthree\nfour\nfive\n"
    /// Three heads that change line 1 and line 5 each their own way; the current one (tablet) holds a screen-clearing
    /// escape sequence, as a hostile replica might.
    static let heads: [(device: String, content: Data)] = [
        ("laptop", .text("ONE\ntwo\nthree\nfour\nfive\n")), ("phone", .text("uno\ntwo\nthree\nfour\nFIVE\n")),
        ("tablet", .text("1\ntwo\nthree\nfour\n5\u{1B}[2J\n")),
    ]

    /// The shell text that runs `truce resolve -i` on `store` with `words`: standard output on the terminal (what it
    /// prints once the terminal is back stays on the screen), errors into the file `err`.
    static func resolve(_ store: CLIStore, _ words: String...) -> String {
        "\(Tmux.quote(truceExecutable)) --store \(Tmux.quote(store.path)) resolve -i \(words.joined(separator: " ")) 2> err"
    }

    /// The last line the screen shows that starts with `prefix`, once it shows one (tmux reads the pane's output a
    /// moment after the program wrote it).
    static func line(_ prefix: String, on tmux: Tmux) throws -> String {
        try tmux.wait(for: "a line starting with '\(prefix)'") { _ in
            (try? tmux.screen(history: true))?.split(separator: "\n").contains { $0.hasPrefix(prefix) } == true
        }
        return try tmux.screen(history: true).split(separator: "\n").last { $0.hasPrefix(prefix) }.map(String.init) ?? ""
    }

    @Test func threeHeadsAnsweredPointByPointWithAnUndoAndAnEditWriteTheCommitTakeWrites() throws {
        let store = try CLIStore()
        let saved = try store.saveConflict("notes/todo.md", base: .text(Self.base), heads: Self.heads)
        let twin = TemporaryDirectory("truce-twin")
        #expect(try Tmux.spawn(["cp", "-a", store.path, twin.file("store")]).status == 0)
        let editor = TemporaryDirectory("truce-editor")
        // The editor: keeps what it was given, and leaves the text the person wants.
        let script = editor.write(Data("#!/bin/sh\ncp \"$1\" \(editor.file("given"))\nprintf 'five!\\n' > \"$1\"\n".utf8), to: "edit.sh")
        #expect(chmod(script, 0o755) == 0)
        let tmux = try Tmux(
            Self.resolve(store, "notes/todo.md", "--device", "person"), environment: ["EDITOR": script, "VISUAL": "", "TERM": "screen"])

        var screen = try tmux.wait(forText: "2 of 2 open")
        #expect(screen.contains("H1  (1 of 2)") && screen.contains("── base ") && screen.contains("1 tablet ") && screen.contains("(current)"))
        // The escape sequence is shown, not obeyed.
        try tmux.send("]")
        screen = try tmux.wait(forText: "H2  (2 of 2)")
        #expect(screen.contains("5\\x1B[2J"), "\(screen)")
        try tmux.send("[")
        try tmux.wait(forText: "H1  (1 of 2)")
        try tmux.send("2")
        try tmux.wait(forText: "H1: head 2 (phone")
        try tmux.send("u")
        screen = try tmux.wait(forText: "undone")
        #expect(screen.contains("2 of 2 open") && screen.contains("H2  (2 of 2)") == false)
        try tmux.send("3")
        screen = try tmux.wait(forText: "H2  (2 of 2)")
        #expect(screen.contains("1 of 2 open"))
        try tmux.send("e")
        screen = try tmux.wait(forText: "all 2 answered")
        #expect(screen.contains("five!") && screen.contains("answer: your own text"), "\(screen)")
        let given = try String(contentsOfFile: editor.file("given"), encoding: .utf8)
        #expect(given.hasPrefix("<<<<<<< 1 tablet ") && given.contains("\n======= 3 laptop ") && given.contains("\n||||||| base "), "\(given)")
        try tmux.send("w")
        #expect(try tmux.status() == 0)
        let printed = try Self.line("resolved ", on: tmux)
        #expect(printed.hasPrefix("resolved notes/todo.md with person: "), "\(printed)")
        let written = String(printed.split(separator: " ").last!)

        // The same answers through --take on the twin write the same commit.
        let answer = editor.write(.text("five!\n"), to: "answer")
        let taken = try truce(
            ["resolve", "notes/todo.md", "--take", "H1=\(saved.heads[0])", "--take", "H2=file:\(answer)", "--device", "person"],
            store: twin.file("store"))
        #expect(taken.output == "resolved notes/todo.md with person: \(written)\n", "\(taken.output) \(taken.errorOutput)")
        let log = try store.gitInStore("log", "-1", "--format=%P%n%(trailers:key=Resolved-By,valueonly)", written).output
        #expect(log.split(separator: "\n").first?.split(separator: " ").count == 3 && log.contains("\nperson\n"), "\(log)")
        #expect(try store.run("cat", "notes/todo.md").output == "ONE\ntwo\nthree\nfour\nfive!\n")
        #expect(try store.gitInStore("fsck", "--strict").status == 0)
    }

    @Test func aJSONConflictIsAnsweredByPathWithTheHeadsSideBySide() throws {
        let store = try CLIStore()
        try Data("*.json merge=structured\n".utf8).write(to: URL(fileURLWithPath: store.path + "/info/attributes"))
        try store.saveConflict(
            "settings.json", base: .text(#"{"theme": "light", "size": 1}"# + "\n"),
            heads: [("laptop", .text(#"{"theme": "dark", "size": 1}"# + "\n")), ("phone", .text(#"{"theme": "solarized", "size": 2}"# + "\n"))])
        let tmux = try Tmux(Self.resolve(store, "settings.json", "--device", "person"))
        let screen = try tmux.wait(forText: "1 of 1 open")
        #expect(screen.contains("/theme  (1 of 1)") && screen.contains("\"solarized\"") && screen.contains("│"), "\(screen)")
        try tmux.send("t")
        try tmux.wait(forText: "all 1 answered")
        try tmux.send("w")
        #expect(try tmux.status() == 0)
        #expect(try store.run("cat", "settings.json").output == #"{"theme": "dark", "size": 2}"# + "\n")
    }

    @Test func aSessionParkedOnOneStoreIsFinishedOnAnotherAfterSync() throws {
        let store = try CLIStore()
        let saved = try store.saveConflict("notes/todo.md", base: .text(Self.base), heads: Self.heads)
        let first = try Tmux(Self.resolve(store, "notes/todo.md", "--device", "laptop"))
        try first.wait(forText: "2 of 2 open")
        try first.send("2")
        try first.wait(forText: "1 of 2 open")
        try first.send("P")
        #expect(try first.status() == 1)
        let parked = try Self.line("parked ", on: first)
        #expect(parked.hasPrefix("parked notes/todo.md with 1 of 2 points answered"), "\(parked)")

        let other = try CLIStore()
        #expect(try other.run("sync", store.path).status == 0)
        let second = try Tmux(Self.resolve(other, "notes/todo.md", "--device", "desk"))
        let screen = try second.wait(forText: "1 of 2 open")
        #expect(screen.contains("continued the session parked by laptop") && screen.contains("H2  (2 of 2)"), "\(screen)")
        try second.send("o")
        try second.wait(forText: "all 2 answered")
        try second.send("w")
        #expect(try second.status() == 0)
        #expect(try other.run("cat", "notes/todo.md").output == "uno\ntwo\nthree\nfour\n5\u{1B}[2J\n")
        // The twin answers through --take: the same commit.
        let taken = try store.run("resolve", "notes/todo.md", "--take", "H1=\(saved.heads[1])", "--take", "H2=ours", "--device", "desk")
        #expect(try other.run("versions", "notes/todo.md", "--json").output.contains(String(taken.output.split(separator: " ").last!.dropLast())))
    }

    @Test func theScreenFollowsResizesAndFitsEightyByTwentyFour() throws {
        let store = try CLIStore()
        try store.saveConflict("a.md", base: .text("x\n"), heads: [("laptop", .text("left\n")), ("phone", .text("right\n"))])
        let tmux = try Tmux(Self.resolve(store, "a.md"), width: 100, height: 30)
        var screen = try tmux.wait(forText: "1 of 1 open")
        #expect(screen.contains("│"), "two heads on a wide terminal are side by side")
        try tmux.resize(width: 80, height: 24)
        screen = try tmux.wait(for: "the stacked layout") { !$0.contains("│") && $0.contains("1 of 1 open") }
        let lines = screen.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count <= 25 && lines.allSatisfy { $0.count <= 80 } && screen.contains("?:help"), "\(screen)")
        #expect(screen.contains("── base ") && screen.contains("left") && screen.contains("right"))
        // A whole side taken, then quit: answers would be lost, so it asks first.
        try tmux.send("A")
        try tmux.wait(forText: "take head 1-2 at every open point?")
        try tmux.send("2")
        try tmux.wait(forText: "all 1 answered")
        try tmux.send("q")
        try tmux.wait(forText: "quit without writing?")
        try tmux.send("y")
        #expect(try tmux.status() == 1)
        #expect(try Self.line("a.md: ", on: tmux) == "a.md: nothing written; 0 of 1 points open")
    }

    @Test(arguments: [(SIGINT, "130"), (SIGTERM, "143")])
    func aSignalRestoresTheTerminal(signal: Int32, status: String) throws {
        let store = try CLIStore()
        try store.saveConflict("a.md", base: .text("x\n"), heads: [("laptop", .text("left\n")), ("phone", .text("right\n"))])
        let command = "exec \(Tmux.quote(truceExecutable)) --store \(Tmux.quote(store.path)) resolve -i a.md"
        let tmux = try Tmux("stty -a > before\nsh -c \(Tmux.quote("echo $$ > pid; " + command))\necho $? > interrupted\nstty -a > after")
        try tmux.wait(forText: "1 of 1 open")
        let pid = try String(contentsOfFile: tmux.directory.file("pid"), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(kill(Int32(pid)!, signal) == 0)
        #expect(try tmux.status() == 0)
        let before = try String(contentsOfFile: tmux.directory.file("before"), encoding: .utf8)
        let after = try String(contentsOfFile: tmux.directory.file("after"), encoding: .utf8)
        #expect(try String(contentsOfFile: tmux.directory.file("interrupted"), encoding: .utf8) == status + "\n")
        #expect(before == after && before.contains("icanon") && before.contains(" echo"), "before:\n\(before)\nafter:\n\(after)")
    }

    @Test func noColourWithNO_COLOR() throws {
        let store = try CLIStore()
        try store.saveConflict("a.md", base: .text("x\n"), heads: [("laptop", .text("left\n")), ("phone", .text("right\n"))])
        let sgr = try Regex("\u{1B}\\[[0-9;]*m")
        let coloured = try Tmux(Self.resolve(store, "a.md"), environment: ["NO_COLOR": "", "TERM": "screen"])
        try coloured.wait(forText: "1 of 1 open")
        #expect(try coloured.screen(escapes: true).contains(sgr), "without NO_COLOR the screen has attributes")
        let plain = try Tmux(Self.resolve(store, "a.md"), environment: ["NO_COLOR": "1", "TERM": "screen"])
        try plain.wait(forText: "1 of 1 open")
        #expect(try plain.screen(escapes: true).contains(sgr) == false)
        let dumb = try Tmux(Self.resolve(store, "a.md"), environment: ["TERM": "dumb"])
        try dumb.wait(forText: "1 of 1 open")
        #expect(try dumb.screen(escapes: true).contains(sgr) == false)
    }

    @Test(arguments: [(100, 30, "settled.md"), (20, 5, "a.md")])
    func aSettledDocumentOrATinyTerminalIsOneLineAndChangesNothing(width: Int, height: Int, document: String) throws {
        let store = try CLIStore()
        try store.saveConflict("a.md", base: .text("x\n"), heads: [("laptop", .text("left\n")), ("phone", .text("right\n"))])
        try store.save("settled.md", "x\n")
        let before = try refsAndObjects(ofStore: store.path)
        let tmux = try Tmux(Self.resolve(store, document), width: width, height: height)
        #expect(try tmux.status() == 2)
        let errors = try String(contentsOfFile: tmux.directory.file("err"), encoding: .utf8)
        let expected = width == 20 ? "truce: the terminal is 20×5; resolve -i needs at least 40×12" : "truce: 'settled.md' is not in conflict"
        #expect(errors.hasPrefix(expected) && errors.split(separator: "\n").count == 1, "\(errors)")
        #expect(try refsAndObjects(ofStore: store.path) == before)
    }
}
