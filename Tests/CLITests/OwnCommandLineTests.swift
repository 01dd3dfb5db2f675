import Foundation
import TestSupport
import Testing
import Truce
import TruceCommandLine

/// An app's own `truce`: its Swift resolver registered in a registry, run through `CommandLineTool`, the library entry.
@Suite(.timeLimit(.minutes(10))) struct OwnCommandLineTests {
    /// An app's resolver: the current version's lines, then every conflict version's, as one document.
    struct JoinHeads: Resolver {
        let name = "join-heads"
        func resolve(_ conflict: ConflictSet, context: ResolutionContext) async throws -> ResolutionOutcome {
            .resolved(content: conflict.heads.reduce(Data()) { $0 + ($1.content ?? Data()) })
        }
    }

    @Test func resolveRunsTheAppsOwnResolverThatConfigNames() async throws {
        let store = try CLIStore()
        let key = "notes/list.txt"
        let conflict = try store.saveConflict(
            key, base: .text("milk\n"),
            heads: [
                (device: "laptop", content: .text("oat milk\n")),
                (device: "phone", content: .text("milk\nbread\n")),
            ])
        try store.writeAttributes("*.txt merge=join-heads\n")

        // The built-in registry, the default, knows no such resolver: exit 2 and nothing written.
        let before = snapshot(ofStore: store.path)
        #expect(await CommandLineTool.run(arguments: ["--store", store.path, "resolve", key, "--device", "app"]) == 2)
        #expect(snapshot(ofStore: store.path) == before)

        var registry = ResolverRegistry.standard
        registry.register(JoinHeads())
        #expect(await CommandLineTool.run(arguments: ["--store", store.path, "resolve", key, "--device", "app"], registry: registry) == 0)

        // What git sees: one head, the resolution, holding the current version's lines and then the laptop's.
        let heads = try store.gitInStore("for-each-ref", "--format=%(objectname)", "refs/truce/heads/").output
            .split(separator: "\n").map(String.init)
        let id = try #require(heads.count == 1 ? heads.first : nil, "heads: \(heads)")
        #expect(!conflict.heads.contains(id) && id != conflict.base)
        #expect(try store.gitInStore("show", "\(id):\(key)").output == "milk\nbread\noat milk\n")
        #expect(try store.gitInStore("log", "-1", "--format=%an", id).output == "join-heads\n")
        #expect(try store.gitInStore("log", "-1", "--format=%(trailers:key=Resolved-By,valueonly)", id).output == "join-heads\n\n")
        try expectResolution(id, settles: conflict, key: key, resolver: "join-heads", in: store)
    }
}
