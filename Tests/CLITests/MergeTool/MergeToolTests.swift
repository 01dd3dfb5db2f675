import Foundation
import TestSupport
import Testing

/// `truce resolve DOC --tool NAME`: a git mergetool, scripted in the store's config or vimdiff driven in tmux.
@Suite(.timeLimit(.minutes(10)))
struct MergeToolTests {
    static func conflict(_ heads: [(device: String, content: Data)] = InteractiveResolverTests.heads) throws -> (CLIStore, SavedConflict) {
        let store = try CLIStore()
        let saved = try store.saveConflict("notes/todo.md", base: .text(InteractiveResolverTests.base), heads: heads)
        return (store, saved)
    }

    static func configure(_ store: CLIStore, _ name: String, _ values: [String: String]) throws {
        for (key, value) in values { #expect(try store.gitInStore("config", "mergetool.\(name).\(key)", value).status == 0) }
    }

    @Test func aScriptedToolTakesTheHeadsPairByPairAndWritesTheCommitContentWrites() throws {
        let (store, _) = try Self.conflict()
        let twin = TemporaryDirectory("truce-twin")
        #expect(try Tmux.spawn(["cp", "-a", store.path, twin.file("store")]).status == 0)
        let log = TemporaryDirectory("truce-tool-log")
        // Keeps REMOTE, and notes the four files it was given: names git would give them, paths only through variables.
        try Self.configure(
            store, "pick",
            [
                "cmd":
                    "for f in \"$LOCAL\" \"$BASE\" \"$REMOTE\" \"$MERGED\"; do basename \"$f\"; done >> \(log.file("names")); cat \"$REMOTE\" > \"$MERGED\""
            ])
        let result = try store.run("resolve", "notes/todo.md", "--tool", "pick", "--device", "person")
        #expect(result.status == 0, "\(result.errorOutput)")
        #expect(result.output.contains("pair 1 of 2") && result.output.contains("pair 2 of 2"), "\(result.output)")
        let names = try String(contentsOfFile: log.file("names"), encoding: .utf8).split(separator: "\n")
        #expect(names.count == 8 && names[0].hasPrefix("todo_LOCAL_") && names[1].hasPrefix("todo_BASE_") && names[3] == "todo.md", "\(names)")
        // The current (tablet) first, then phone, then laptop, whose text the last pair keeps.
        #expect(try store.run("cat", "notes/todo.md").output == "ONE\ntwo\nthree\nfour\nfive\n")
        let written = String(result.output.split(separator: "\n").last!.split(separator: " ").last!)
        let content = log.write(.text("ONE\ntwo\nthree\nfour\nfive\n"), to: "content")
        let same = try truce(["resolve", "notes/todo.md", "--content", content, "--device", "person"], store: twin.file("store"))
        #expect(same.output == "resolved notes/todo.md with person: \(written)\n")
    }

    @Test(arguments: [
        (
            "crash", ["cmd": "kill -SEGV $$", "trustExitCode": "true"], 1,
            "merge tool 'crash' exited with status 139 on pair 1 of 2; nothing was written"
        ),
        ("keep", ["cmd": "true"], 1, "merge tool 'keep' left MERGED unchanged on pair 1 of 2; nothing was written"),
        (
            "marks", ["cmd": "cat \"$MERGED\" > \"$MERGED.new\" && mv \"$MERGED.new\" \"$MERGED\""], 1,
            "MERGED still holds a conflict marker on line 1"
        ),
        ("nope", [:], 2, "unknown merge tool 'nope': set mergetool.nope.cmd in the store's config"),
        ("meld", ["path": "/nonexistent/meld"], 2, "merge tool 'meld' needs '/nonexistent/meld', which is not installed"),
    ])
    func aToolThatFailsIsOneLineAndWritesNothing(name: String, config: [String: String], status: Int32, message: String) throws {
        let (store, _) = try Self.conflict()
        try Self.configure(store, name, config)
        let before = try refsAndObjects(ofStore: store.path)
        let result = try store.run("resolve", "notes/todo.md", "--tool", name)
        #expect(
            result.status == status && result.errorLines.count == 1 && result.errorLines[0].hasPrefix("truce: " + message), "\(result.errorOutput)")
        #expect(try refsAndObjects(ofStore: store.path) == before)
    }

    @Test func vimdiffEditsMergedAndWqaWritesOrCqWritesNothing() throws {
        let (store, _) = try Self.conflict([("laptop", .text("ONE\ntwo\nthree\nfour\nfive\n")), ("phone", .text("uno\ntwo\nthree\nfour\nfive\n"))])
        let home = TemporaryDirectory("truce-home")
        let command = "\(Tmux.quote(truceExecutable)) --store \(Tmux.quote(store.path)) resolve notes/todo.md --tool vimdiff --device person 2> err"
        let environment = ["HOME": home.path, "TERM": "screen"]
        let before = try refsAndObjects(ofStore: store.path)
        // vim draws on the terminal: standard output stays on it, as under git mergetool.
        let failing = try Tmux(command, environment: environment)
        try failing.wait(forText: "_LOCAL_")
        try failing.send(":cq", "Enter")
        #expect(try failing.status() == 1)
        #expect(try refsAndObjects(ofStore: store.path) == before)

        let tmux = try Tmux(command, environment: environment)
        // The cursor is in MERGED, the bottom window of git's default layout.
        try tmux.wait(forText: "_LOCAL_")
        try tmux.send(":%d", "Enter")
        try tmux.send(":call setline(1, ['one by vim', 'two', 'three', 'four', 'five'])", "Enter")
        try tmux.send(":wqa", "Enter")
        let status = try tmux.status()
        #expect(status == 0, "\((try? String(contentsOfFile: tmux.directory.file("err"), encoding: .utf8)) ?? "")")
        #expect(try store.run("cat", "notes/todo.md").output == "one by vim\ntwo\nthree\nfour\nfive\n")
    }
}
