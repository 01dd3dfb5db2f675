import Foundation
import TestSupport
import Testing

/// `sync`, `changes` and `prune` through the `truce` binary.
@Suite(.timeLimit(.minutes(10))) struct ReplicaCommandTests {
    @Test func syncBringsEveryVersionEverywhereAndChangesSurvivesARestart() throws {
        let laptop = try CLIStore(), phone = try CLIStore()
        let base = try laptop.save("notes/a.md", "a\nb\nc\n", "--device", "laptop", "--date", "2026-11-30T09:00:00Z")
        #expect(try phone.run("sync", laptop.path).output == "received 1 version(s), sent 0\n")
        let token = try #require(try phone.run("changes").output.split(separator: "\n").last.map { String($0.dropFirst("token: ".count)) })
        try laptop.save("notes/a.md", "A\nb\nc\n", "--device", "laptop", "--base", base, "--date", "2026-11-30T10:00:00Z")
        try phone.save("notes/a.md", "a\nb\nC\n", "--device", "phone", "--base", base, "--date", "2026-11-30T11:00:00Z")

        let synced = try phone.json("sync", "file://" + laptop.path)
        #expect((synced["received"] as? [[String: Any]])?.count == 1)
        #expect(synced["inConflict"] as? [String] == ["notes/a.md"])
        let onLaptop = try laptop.json("versions", "notes/a.md"), onPhone = try phone.json("versions", "notes/a.md")
        #expect((onLaptop["current"] as? [String: Any])?["id"] as? String == (onPhone["current"] as? [String: Any])?["id"] as? String)
        #expect(onLaptop["state"] as? String == "inConflict")

        // A token kept by one process is good in the next.
        let later = try phone.run("changes", "--since", token, "--exclude-author", "phone")
        #expect(later.status == 0)
        let lines = later.output.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines[0].hasPrefix("save  ") && lines[0].hasSuffix("  laptop  notes/a.md"))
        let json = try phone.json("changes", "--since", token)
        #expect((json["changes"] as? [[String: Any]])?.map { $0["author"] as? String } == ["phone", "laptop"])
    }

    @Test func pruneReclaimsSpaceAndGitAgrees() throws {
        let store = try CLIStore()
        try store.save("keep.txt", "keep\n")
        try store.save("gone.txt", String(repeating: "bulk line\n", count: 2000))
        #expect(try store.run("delete", "gone.txt").status == 0)
        let result = try store.run("prune", "--now")
        #expect(result.status == 0)
        #expect(result.output.hasPrefix("dropped deleted document gone.txt\npacked "))
        #expect(result.errorLines.isEmpty)
        #expect(try git("-C", store.path, "count-objects", "-v").output.hasPrefix("count: 0\n"))
        #expect(try git("-C", store.path, "fsck", "--strict").status == 0)
        #expect(try store.run("cat", "keep.txt").output == "keep\n")
        #expect(try store.run("prune", "--expire", "3.days", "--json").status == 0)
    }

    @Test func aKilledPruneLeavesAStoreFsckAcceptsAndLosesNothing() throws {
        let store = try CLIStore()
        var kept: [String: String] = [:]
        for index in 0..<40 {
            let key = "docs/\(index).txt"
            kept[key] = "version \(index)\n"
            try store.save(key, String(repeating: "old \(index)\n", count: 50))
            try store.save(key, kept[key]!)
        }
        for round in 0..<8 {
            try store.save("churn.txt", "round \(round)\n")
            #expect(try store.run("delete", "churn.txt").status == 0)
            let prune = Process()
            prune.executableURL = URL(fileURLWithPath: truceExecutable)
            prune.arguments = ["--store", store.path, "prune", "--now"]
            prune.standardOutput = FileHandle.nullDevice
            prune.standardError = FileHandle.nullDevice
            try prune.run()
            usleep(UInt32(round * 15_000))
            kill(prune.processIdentifier, SIGKILL)
            prune.waitUntilExit()
            #expect(try git("-C", store.path, "fsck", "--strict").status == 0, "round \(round)")
        }
        for (key, content) in kept { #expect(try store.run("cat", key).output == content) }
        // The dead prunes' lock does not stop the next one.
        let last = try store.run("prune", "--now")
        #expect(last.status == 0, "stderr: \(last.errorOutput)")
        #expect(try git("-C", store.path, "fsck", "--strict").status == 0)
    }

    @Test(arguments: [
        (["sync", "/nonexistent/store"], "cannot sync with '/nonexistent/store'"),
        (["sync"], "sync: missing REMOTE"),
        (["changes", "--since", "garbage"], "invalid change token 'garbage'"),
        (["changes", "--since", "t1-0123456789abcdef0123456789abcdef01234567"], "invalid change token"),
        (["prune", "--expire", "soon"], "invalid expiry 'soon'"),
        (["prune", "--now", "--expire", "1.day"], "give --now or --expire, not both"),
    ])
    func badInputIsOneLineAndChangesNothing(words: [String], message: String) throws {
        let store = try CLIStore()
        try store.save("a.txt", "x\n")
        let before = snapshot(ofStore: store.path)
        let result = try truce(words, store: store.path)
        #expect(result.status == 2)
        #expect(result.errorLines.count == 1)
        #expect(result.errorLines.first?.contains(message) == true, "stderr: \(result.errorOutput)")
        #expect(snapshot(ofStore: store.path) == before)
    }

    @Test func syncWithAGitWorkingTreeIsRefused() throws {
        let store = try CLIStore()
        try store.save("a.txt", "x\n")
        let directory = TemporaryDirectory()
        #expect(try git("init", "-q", directory.file("worktree")).status == 0)
        let before = snapshot(ofStore: store.path)
        let result = try store.run("sync", directory.file("worktree"))
        #expect(result.status == 2)
        #expect(result.errorLines.count == 1)
        #expect(result.errorLines.first?.contains("is neither a Truce store nor a bare git repository") == true, "\(result.errorOutput)")
        #expect(snapshot(ofStore: store.path) == before)
    }

    @Test func aPlainBareRepositoryIsAHubThatHoldsOneRefWhateverItsReplicas() throws {
        let laptop = try CLIStore(), phone = try CLIStore()
        let directory = TemporaryDirectory()
        let hub = directory.file("hub.git")
        #expect(try git("init", "-q", "--bare", hub).status == 0)
        for index in 0..<5 { try laptop.save("notes/\(index).md", "laptop \(index)\n") }
        #expect(try laptop.run("sync", hub).status == 0)
        let phoneSync = try phone.run("sync", hub)
        #expect(phoneSync.status == 0)
        #expect(phoneSync.output.hasPrefix("received 5 version(s)"), "\(phoneSync.output)")
        try phone.save("notes/phone.md", "phone\n")
        #expect(try phone.run("sync", hub).status == 0)
        #expect(try laptop.run("sync", hub).output.hasPrefix("received 1 version(s)"))
        #expect(try laptop.run("cat", "notes/phone.md").output == "phone\n")
        // One ref, the hub's index of the replicas' manifests, whatever the number of replicas and documents; git itself
        // finds the store whole.
        let refs = try git("-C", hub, "for-each-ref", "--format=%(refname)").output.split(separator: "\n")
        #expect(refs == ["refs/truce/hub"], "\(refs)")
        let listed = try git("-C", hub, "log", "--format=%(trailers:key=Replica,valueonly)", "--grep=^Manifest$", "refs/truce/hub").output
        #expect(Set(listed.split(separator: "\n")).count == 2, "\(listed)")
        #expect(try git("-C", hub, "fsck", "--strict", "--no-dangling").output.isEmpty)
    }

    @Test func replicasListsEveryReplicaOfTheHubWithWhenItLastPublished() throws {
        let laptop = try CLIStore(), phone = try CLIStore(), tablet = try CLIStore()
        let directory = TemporaryDirectory()
        let hub = directory.file("hub.git")
        #expect(try git("init", "-q", "--bare", hub).status == 0)
        // A store that never synced knows no replica, itself included: it has published nothing.
        #expect(try laptop.run("replicas").output == "0 replicas\n")
        try laptop.save("a.md", "a\n")
        for store in [laptop, phone, tablet] { #expect(try store.run("sync", hub).status == 0) }
        // Its second change publishes its second manifest; the others published one each, when they joined.
        try laptop.save("b.md", "b\n")
        #expect(try laptop.run("sync", hub).status == 0)
        let ids = try [laptop, phone, tablet].map { try git("-C", $0.path, "config", "truce.replica").output.trimmingCharacters(in: .newlines) }
        let lines = try laptop.run("replicas").output.split(separator: "\n").map(String.init)
        #expect(lines.count == 4 && lines.last == "3 replicas", "\(lines)")
        for (index, id) in ids.enumerated() {
            let line = try #require(lines.first { $0.hasPrefix(id + "  ") }, "\(id) is not listed: \(lines)")
            #expect(line.hasSuffix(index == 0 ? "  2 manifests  (this store)" : "  1 manifests"), "\(line)")
        }
        // The JSON says the same, with dates a reader can compare.
        let json = try #require(try JSONSerialization.jsonObject(with: Data(try laptop.run("replicas", "--json").output.utf8)) as? [[String: Any]])
        #expect(Set(json.compactMap { $0["id"] as? String }) == Set(ids))
        #expect(json.filter { $0["isThisStore"] as? Bool == true }.compactMap { $0["id"] as? String } == [ids[0]])
    }

    @Test func replicasForgetTakesARetiredReplicaOffTheHubAndRefusesBadInput() throws {
        let laptop = try CLIStore(), tablet = try CLIStore()
        let directory = TemporaryDirectory()
        let hub = directory.file("hub.git")
        #expect(try git("init", "-q", "--bare", hub).status == 0)
        try tablet.save("t.md", "tablet\n")
        for store in [laptop, tablet] { #expect(try store.run("sync", hub).status == 0) }
        let tabletID = try git("-C", tablet.path, "config", "truce.replica").output.trimmingCharacters(in: .newlines)
        let before = try git("-C", hub, "for-each-ref").output
        for bad in [["replicas", "--forget", "not-an-id", hub], ["replicas", "--forget", tabletID]] {
            let refused = try laptop.run(bad)
            #expect(refused.status == 2 && refused.errorLines.count == 1, "\(bad): \(refused.status) \(refused.errorOutput)")
        }
        #expect(try git("-C", hub, "for-each-ref").output == before)
        let forgot = try laptop.run("replicas", "--forget", tabletID, hub)
        #expect(forgot.status == 0 && forgot.output == "forgot replica \(tabletID) on \(hub)\n", "\(forgot.output) \(forgot.errorOutput)")
        #expect(try !git("-C", hub, "for-each-ref").output.contains(tabletID))
        #expect(try laptop.run("cat", "t.md").output == "tablet\n")
        #expect(try git("-C", hub, "fsck", "--strict", "--no-dangling").output.isEmpty)
    }
}
