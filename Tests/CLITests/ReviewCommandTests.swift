import Foundation
import TestSupport
import Testing

/// `truce review`: what automatic resolutions dropped, and `--restore`.
@Suite(.timeLimit(.minutes(10))) struct ReviewCommandTests {
    /// settings.json settled key by key by last-writer-wins: the laptop's theme and note dropped, the phone's kept.
    static func resolvedStore() throws -> (store: CLIStore, conflict: SavedConflict, resolution: String) {
        let store = try CLIStore()
        try store.writeAttributes("*.json merge=last-writer-wins\n")
        try store.setStoreConfig("resolver.last-writer-wins.granularity", "key")
        let conflict = try store.saveConflict(
            "settings.json", base: .text(#"{"theme":"light","note":"n","size":1}"#),
            heads: [
                ("laptop", .text(#"{"theme":"dark","note":"line\u001b]0;evil\u0007\nbreak \u202e","size":1}"#)),
                ("phone", .text(#"{"theme":"blue","size":2}"#)),
            ])
        let resolved = try store.run("resolve", "settings.json", "--device", "desk")
        #expect(resolved.status == 0, "\(resolved.errorOutput)")
        let resolution = try #require(resolved.output.split(separator: " ").last).trimmingCharacters(in: .newlines)
        return (store, conflict, resolution)
    }

    @Test func reviewListsEveryDroppedValueForPeople() throws {
        let (store, conflict, resolution) = try Self.resolvedStore()
        let result = try store.run("review")
        #expect(result.status == 0 && result.errorLines.isEmpty, "\(result.errorOutput)")
        let (laptop, phone) = (String(conflict.heads[0].prefix(7)), String(conflict.heads[1].prefix(7)))
        let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first == "\(resolution)  2026-11-30T11:00:00Z  last-writer-wins  desk  settings.json")
        #expect(
            Array(lines.dropFirst().prefix(6)) == [
                "  at \"/note\": the latest change wins",
                "    kept     phone  2026-11-30T11:00:00Z  \(phone)  (absent)",
                // JSON escapes control characters itself; a direction override it leaves is written out, never sent
                // to the terminal to reorder the line.
                "    dropped  laptop  2026-11-30T10:00:00Z  \(laptop)  = \"line\\u001b]0;evil\\u0007\\nbreak \\u{202E}\"  restore: --restore /note@\(laptop)",
                "  at \"/theme\": the latest change wins",
                "    kept     phone  2026-11-30T11:00:00Z  \(phone)  = \"blue\"",
                "    dropped  laptop  2026-11-30T10:00:00Z  \(laptop)  = \"dark\"  restore: --restore /theme@\(laptop)",
            ], "\(result.output)")
        #expect(lines.dropFirst(7).first?.hasPrefix("token: t1-") == true)
        #expect(!result.stdout.contains(0x1B) && !result.stdout.contains(0x07))
    }

    @Test func aResolutionASyncBroughtIsListedAsReceived() throws {
        let (store, _, resolution) = try Self.resolvedStore()
        let other = try CLIStore()
        #expect(try other.run("sync", store.path).status == 0)
        let lines = try other.run("review").output.split(separator: "\n")
        #expect(lines.first == "\(resolution)  2026-11-30T11:00:00Z  last-writer-wins  received  settings.json")
        #expect(lines.count == 8, "the same decisions as where it was made")
    }

    @Test func restoreBringsAValueBackAndReviewShowsItRestored() throws {
        let (store, conflict, _) = try Self.resolvedStore()
        let restored = try store.run("review", "settings.json", "--restore", "/theme", "--device", "me")
        #expect(restored.status == 0, "\(restored.errorOutput)")
        let id = restored.output.trimmingCharacters(in: .newlines)
        #expect(try store.run("cat", "settings.json").output == #"{"theme":"dark","size":2}"#)
        let message = try store.gitInStore("show", "-s", "--format=%B", id).output
        #expect(message.hasPrefix("Save settings.json\n\nDocument: settings.json\nDevice: me\nRestores-Dropped: "), "\(message)")
        #expect(message.contains(" \(conflict.heads[0]) \"/theme\"\n"))
        let review = try store.run("review", "settings.json").output
        #expect(review.contains("= \"dark\"  restored by \(id.prefix(7))\n"), "\(review)")
        #expect(review.contains("restore: --restore /note@"))
        // Again: the current version holds it already.
        let again = try store.run("review", "settings.json", "--restore", "/theme@\(conflict.heads[0].prefix(8))")
        #expect(again.status == 0 && again.output == "nothing to restore: the current version of settings.json already holds that value\n")
        #expect(try store.gitInStore("fsck", "--strict", "--no-dangling").status == 0)
    }

    @Test func aValueThatNoLongerFitsIsRefusedAndNothingIsWritten() throws {
        let (store, _, _) = try Self.resolvedStore()
        try store.save("settings.json", "[1, 2]")
        let before = snapshot(ofStore: store.path)
        let result = try store.run("review", "settings.json", "--restore", "/theme")
        #expect(result.status == 2 && result.errorLines.count == 1, "\(result.errorOutput)")
        #expect(result.errorLines.first?.hasPrefix("truce: cannot restore in 'settings.json': last-writer-wins could not put back") == true)
        #expect(snapshot(ofStore: store.path) == before)
    }

    @Test func jsonListsTheResolutionsDecisionsAndDroppedValues() throws {
        let (store, conflict, resolution) = try Self.resolvedStore()
        let review = try store.json("review", "--resolver", "last-writer-wins")
        let resolutions = try #require(review["resolutions"] as? [[String: Any]])
        #expect(resolutions.count == 1)
        #expect(resolutions.first?["resolution"] as? String == resolution && resolutions.first?["author"] as? String == "desk")
        let dropped = try #require(resolutions.first?["droppedValues"] as? [[String: Any]])
        #expect(dropped.compactMap { $0["point"] as? String } == ["/note", "/theme"])
        #expect(dropped.compactMap { ($0["value"] as? [String: Any])?["version"] as? String } == [conflict.heads[0], conflict.heads[0]])
        #expect((dropped.last?["value"] as? [String: Any])?["text"] as? String == #""dark""#)
        #expect((try store.json("review", "--resolver", "three-way")["resolutions"] as? [Any])?.isEmpty == true)
        // From the token on, nothing new.
        let token = try #require(review["token"] as? String)
        #expect((try store.json("review", "--since", token)["resolutions"] as? [Any])?.isEmpty == true)
    }

    @Test func watchSaysHowManyValuesAResolutionDropped() async throws {
        let store = try CLIStore()
        try store.writeAttributes("*.json merge=last-writer-wins\n")
        try store.setStoreConfig("resolver.last-writer-wins.granularity", "key")
        try store.saveConflict(
            "settings.json", base: .text(#"{"a":0,"b":0}"#), heads: [("laptop", .text(#"{"a":1,"b":1}"#)), ("phone", .text(#"{"a":2,"b":2}"#))])
        let watch = try await WatchCommandTests.startWatch(store, "--json")
        defer { watch.kill() }
        #expect(try store.run("resolve", "settings.json", "--device", "desk").status == 0)
        try await waitUntil("watch to print the resolution", within: 3) { watch.outputSoFar.contains("\"resolution\"") }
        let printed = WatchCommandTests.objects(in: watch.outputSoFar)
        #expect(printed.first { $0["kind"] == "resolution" }?["droppedValueCount"] == "2")
        #expect(printed.filter { $0["kind"] == "save" }.allSatisfy { $0["droppedValueCount"] == "0" })
    }
}
