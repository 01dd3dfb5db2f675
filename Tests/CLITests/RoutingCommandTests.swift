import Foundation
import TestSupport
import Testing

/// The synced routing documents `.truce/attributes` and `.truce/config`, as the CLI reads them.
@Suite(.timeLimit(.minutes(10))) struct RoutingCommandTests {
    @Test func theSyncedAttributesDecideBeforeTheLocalOnesAndExplainNamesTheLine() throws {
        let store = try CLIStore()
        try store.writeAttributes("*.md merge=three-way\n")
        try store.save(".truce/attributes", "# synced\n*.md merge=overwrite-with-current\n")
        _ = try store.saveConflict("notes/todo.md", base: .text("a\nb\n"), heads: [("laptop", .text("A\nb\n")), ("phone", .text("a\nB\n"))])
        let explain = try store.run("explain", "notes/todo.md")
        #expect(explain.status == 0, "stderr: \(explain.errorOutput)")
        #expect(
            explain.output.contains("resolver: overwrite-with-current (from .truce/attributes line 2: *.md merge=overwrite-with-current)"),
            "\(explain.output)")
        let resolved = try store.run("resolve", "notes/todo.md")
        #expect(resolved.status == 0, "stderr: \(resolved.errorOutput)")
        #expect(try store.run("cat", "notes/todo.md").output == "a\nB\n", "overwrite-with-current keeps the phone's, the current version")
    }

    @Test func aSyncedLineNamingADriverThisReplicaLacksIsOneClearErrorAndChangesNothing() throws {
        let store = try CLIStore()
        try store.save(".truce/attributes", "*.md merge=mydriver\n")
        _ = try store.saveConflict("notes/todo.md", base: .text("a\n"), heads: [("laptop", .text("b\n")), ("phone", .text("c\n"))])
        let explain = try store.run("explain", "notes/todo.md")
        #expect(explain.status == 2)
        #expect(explain.errorLines.count == 1)
        #expect(explain.errorLines.first?.contains("unknown resolver 'mydriver'") == true, "\(explain.errorOutput)")
        #expect(explain.errorLines.first?.contains("merge.mydriver.driver") == true, "\(explain.errorOutput)")
        let before = snapshot(ofStore: store.path)
        let resolve = try store.run("resolve", "notes/todo.md")
        #expect(resolve.status == 2)
        #expect(resolve.errorLines.count == 1 && resolve.errorLines.first?.contains(".truce/attributes line 1") == true, "\(resolve.errorOutput)")
        #expect(snapshot(ofStore: store.path) == before)
    }

    @Test func aSyncedConfigCannotDefineADriverCommand() throws {
        let store = try CLIStore()
        let marker = store.directory.file("ran")
        try store.save(".truce/config", "[merge \"evil\"]\n\tdriver = touch \(marker)\n[resolver \"three-way\"]\n\tstyle = diff3\n")
        try store.save(".truce/attributes", "*.md merge=evil\n")
        _ = try store.saveConflict("notes/todo.md", base: .text("a\n"), heads: [("laptop", .text("b\n")), ("phone", .text("c\n"))])
        let resolve = try store.run("resolve", "notes/todo.md")
        #expect(resolve.status == 2, "stderr: \(resolve.errorOutput)")
        #expect(resolve.errorLines.first?.contains("unknown resolver 'evil'") == true, "\(resolve.errorOutput)")
        #expect(!FileManager.default.fileExists(atPath: marker), "a synced driver command ran")
        // Resolver options do travel: explain shows the synced one and where it came from.
        try store.save(".truce/attributes", "*.md merge=three-way\n")
        let explain = try store.run("explain", "notes/todo.md")
        #expect(explain.output.contains("option: resolver.three-way.style = diff3"), "\(explain.output)")
    }
}
