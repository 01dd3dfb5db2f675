import Foundation
import TestSupport
import Testing

/// `truce reopen`: a resolution turned back into the conflict it settled.
@Suite(.timeLimit(.minutes(10))) struct ReopenCommandTests {
    @Test func reopenBringsBackTheHeadsAResolutionSettled() throws {
        let (store, conflict) = try ResolveCommandTests.sectionConflict()
        let key = ResolveCommandTests.key
        let resolved = try store.run("resolve", key, "--device", "desk")
        let resolution = try resolutionID(in: resolved, key: key, resolver: "three-way")

        let result = try store.run("reopen", key)
        #expect(result.status == 0, "stderr: \(result.errorOutput)")
        #expect(result.errorLines.isEmpty)
        let lines = result.output.split(separator: "\n").map(String.init)
        #expect(lines.first == "\(key): in conflict")

        // Each settled version comes back as a reopening: a child of the resolution restoring that version.
        let versions = try store.json("versions", key)
        #expect(versions["state"] as? String == "inConflict")
        let current = try #require((versions["current"] as? [String: Any])?["id"] as? String)
        let conflicts = (versions["conflicts"] as? [[String: Any]])?.compactMap { $0["id"] as? String } ?? []
        #expect(lines.dropFirst().first?.hasPrefix("current   \(current)  ") == true, "stdout:\n\(result.output)")
        #expect(try restoredVersion(of: current, in: store) == conflict.current)
        #expect(try conflicts.map { try restoredVersion(of: $0, in: store) } == [conflict.heads[0]])
        for reopening in [current] + conflicts {
            #expect(try store.gitInStore("log", "-1", "--format=%P", reopening).output == resolution + "\n")
        }
        #expect((versions["base"] as? [String: Any])?["id"] as? String == conflict.base)
        #expect(try store.run("cat", key).stdout == ResolveCommandTests.phonePlans)
        #expect(try store.run("status").output == "\(key): in conflict (2 heads)\n")
        // Nothing is lost until prune: the resolution is still in the object database, and the store is sound.
        #expect(try store.gitInStore("cat-file", "-e", resolution).status == 0)
        #expect(try store.gitInStore("fsck", "--strict").status == 0)

        // The conflict can be settled again.
        let again = try store.run("resolve", key, "--device", "desk")
        #expect(again.status == 0, "stderr: \(again.errorOutput)")
        #expect(try store.run("versions", key).output.hasPrefix("\(key): settled\n"))
    }

    @Test func reopenAfterAnNWayResolutionBringsBackEveryHead() throws {
        let store = try CLIStore()
        try store.writeAttributes("*.png merge=overwrite-with-current\n")
        let heads = [Data([0x89, 0x00, 1]), Data([0x89, 0x00, 2]), Data([0x89, 0x00, 3])]
        let conflict = try store.saveConflict(
            "a.png", base: Data([0x89, 0x00]),
            heads: [("laptop", heads[0]), ("phone", heads[1]), ("tablet", heads[2])])
        #expect(try store.run("resolve", "a.png", "--device", "desk").status == 0)

        let result = try store.run("reopen", "a.png", "--json")
        #expect(result.status == 0, "stderr: \(result.errorOutput)")
        let report = try jsonObject(result)
        #expect(report["state"] as? String == "inConflict")
        let current = try #require((report["current"] as? [String: Any])?["id"] as? String)
        #expect(try restoredVersion(of: current, in: store) == conflict.current)
        let conflicts = (report["conflicts"] as? [[String: Any]])?.compactMap { $0["id"] as? String } ?? []
        #expect(try conflicts.count == 2 && Set(conflicts.map { try restoredVersion(of: $0, in: store) }) == conflict.losers)
        #expect(try store.json("versions", "a.png")["state"] as? String == "inConflict")
    }

    @Test func reopenWithoutAResolutionHeadExitsTwoAndChangesNothing() throws {
        let store = try CLIStore()
        try store.save("a.txt", "one\n")
        try store.save("a.txt", "two\n")
        let before = snapshot(ofStore: store.path)
        let result = try store.run("reopen", "a.txt")
        #expect(result.status == 2)
        #expect(result.errorLines == ["truce: nothing to reopen: no head of 'a.txt' is a resolution"], "stderr: \(result.errorOutput)")
        #expect(result.stdout.isEmpty)
        #expect(snapshot(ofStore: store.path) == before)
    }

    @Test func reopenTwiceFindsNothingTheSecondTime() throws {
        let (store, _) = try ResolveCommandTests.sectionConflict()
        #expect(try store.run("resolve", ResolveCommandTests.key).status == 0)
        #expect(try store.run("reopen", ResolveCommandTests.key).status == 0)
        let before = snapshot(ofStore: store.path)
        let second = try store.run("reopen", ResolveCommandTests.key)
        #expect(second.status == 2)
        #expect(second.errorLines.count == 1)
        #expect(second.errorLines.first?.contains("nothing to reopen") == true)
        #expect(snapshot(ofStore: store.path) == before)
    }

    /// The version a reopening restores, from its `Restores:` trailer as git reads it.
    private func restoredVersion(of reopening: String, in store: CLIStore) throws -> String {
        try store.gitInStore("log", "-1", "--format=%(trailers:key=Restores,valueonly)", reopening).output
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
