import Foundation
import TestSupport
import Testing
import Truce

/// Routing written by the library's `store.route(_:to:options:)`, as the `truce` command reads it.
@Suite(.timeLimit(.minutes(10))) struct RouteCommandTests {
    @Test func explainAndResolvePickUpARouteWrittenFromCode() throws {
        let store = try CLIStore()
        try store.save("notes/todo.md", "a\nb\nc\n", "--device", "laptop", "--date", "2026-11-30T09:00:00Z")
        let base = try #require(try store.json("versions", "notes/todo.md")["current"] as? [String: Any])["id"] as! String
        try store.save("notes/todo.md", "A\nb\nc\n", "--device", "laptop", "--base", base, "--date", "2026-11-30T10:00:00Z")
        try store.save("notes/todo.md", "a\nb\nC\n", "--device", "phone", "--base", base, "--date", "2026-11-30T10:05:00Z")
        try DocumentStore.open(at: store.path).route(
            "*.md", to: "three-way", options: ["style": "diff3", "fallback": "list-conflicts"],
            device: "laptop")

        let explain = try store.run("explain", "notes/todo.md")
        #expect(explain.status == 0, "stderr: \(explain.errorOutput)")
        #expect(explain.output.contains("resolver: three-way (from .truce/attributes line 1: *.md merge=three-way)"), "\(explain.output)")
        #expect(explain.output.contains("option: resolver.three-way.style = diff3"), "\(explain.output)")
        #expect(explain.output.contains("list-conflicts"), "the fallback is part of the chain: \(explain.output)")

        let resolve = try store.run("resolve", "notes/todo.md")
        #expect(resolve.status == 0, "stderr: \(resolve.errorOutput)")
        #expect(resolve.output.contains("with three-way"), "\(resolve.output)")
        #expect(try store.run("cat", "notes/todo.md").output == "A\nb\nC\n")
    }
}
