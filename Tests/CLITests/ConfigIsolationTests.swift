import Foundation
import TestSupport
import Testing

/// Truce reads only the store's own config: no global, XDG or system git config (nor an attributes file one of
/// them names) changes what it does, and a home directory whose config cannot be read does not matter.
@Suite(.timeLimit(.minutes(10))) struct ConfigIsolationTests {
    /// A conflict three-way cannot settle (both heads change the same line) but `union` would.
    func sameLineConflict() throws -> CLIStore {
        let store = try CLIStore()
        try store.saveConflict("notes.md", base: .text("one\ntwo\n"), heads: [("laptop", .text("ONE\ntwo\n")), ("phone", .text("One!\ntwo\n"))])
        return store
    }

    @Test func aHomeWhoseConfigCannotBeReadDoesNotMatter() throws {
        let home = TemporaryDirectory("truce-home")
        // As root nothing is unreadable by permissions; a symlink loop makes stat fail for anyone.
        try FileManager.default.createSymbolicLink(atPath: home.file(".gitconfig"), withDestinationPath: ".gitconfig")
        try FileManager.default.createDirectory(atPath: home.file("xdg/git"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: home.file("xdg/git/config"), withDestinationPath: "config")
        let environment = ["HOME": home.path, "XDG_CONFIG_HOME": home.file("xdg")]
        let directory = TemporaryDirectory()
        let store = directory.file("store")
        for words in [["init"], ["save", "a.txt", "-"], ["versions", "a.txt"], ["status"], ["explain", "a.txt"], ["changes"]] {
            let result = try truce(words, store: store, input: .text("x\n"), environment: environment)
            #expect(result.status == 0, "\(words): \(result.errorOutput)")
        }
        #expect(try git(["-C", store, "fsck", "--strict"]).status == 0)
    }

    @Test func aGlobalOrXDGConfigChangesNothing() throws {
        let store = try sameLineConflict()
        let plain = TemporaryDirectory("truce-home")
        let hostile = TemporaryDirectory("truce-home")
        let attributes = hostile.write(.text("*.md merge=union\n"), to: "attributes")
        hostile.write(
            .text("[core]\n\tattributesFile = \(attributes)\n[merge]\n\tdefault = union\n[truce]\n\tdeleteConflict = delete-wins\n"),
            to: ".gitconfig")
        try FileManager.default.createDirectory(atPath: hostile.file("xdg/git"), withIntermediateDirectories: true)
        hostile.write(.text("*.md merge=union\n"), to: "xdg/git/attributes")
        hostile.write(.text("[merge]\n\tdefault = union\n"), to: "xdg/git/config")
        let environments = [plain, hostile].map { ["HOME": $0.path, "XDG_CONFIG_HOME": $0.file("xdg")] }

        let before = snapshot(ofStore: store.path)
        for words in [["explain", "notes.md"], ["resolve", "notes.md", "--dry-run"], ["conflicts", "notes.md"]] {
            let results = try environments.map { try truce(words, store: store.path, environment: $0) }
            #expect(results[1].status == results[0].status, "\(words): \(results[1].errorOutput)")
            #expect(results[1].output == results[0].output, "\(words) differs under a hostile ~/.gitconfig")
        }
        let explained = try truce(["explain", "notes.md"], store: store.path, environment: environments[1]).output
        #expect(explained.contains("resolver: three-way (from default: no attributes line sets merge for this key)"), "\(explained)")
        #expect(explained.contains("delete conflicts: modify-wins (default)"))
        #expect(try truce(["resolve", "notes.md"], store: store.path, environment: environments[1]).status == 1)
        #expect(snapshot(ofStore: store.path) == before)
    }
}
