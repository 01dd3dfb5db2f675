import Foundation
import TestSupport
import Testing

/// `sync --resolve`, `log` and `explain` for replicas that each resolve what they see.
@Suite(.timeLimit(.minutes(10))) struct ConvergenceCommandTests {
    /// A laptop and a phone with one document edited on both since their last sync, both in conflict now.
    static func conflictedPair(phoneText: String = "a\nb\nC\n") throws -> (laptop: CLIStore, phone: CLIStore) {
        let laptop = try CLIStore(), phone = try CLIStore()
        let base = try laptop.save("notes/a.md", "a\nb\nc\n", "--device", "laptop", "--date", "2026-11-30T09:00:00Z")
        #expect(try phone.run("sync", laptop.path).status == 0)
        try laptop.save("notes/a.md", "A\nb\nc\n", "--device", "laptop", "--base", base, "--date", "2026-11-30T10:00:00Z")
        try phone.save("notes/a.md", phoneText, "--device", "phone", "--base", base, "--date", "2026-11-30T11:00:00Z")
        return (laptop, phone)
    }

    @Test func syncResolveSettlesWhatItCanAndBothReplicasEndOnOneHead() throws {
        let (laptop, phone) = try Self.conflictedPair()
        let result = try phone.run("sync", laptop.path, "--resolve", "--device", "phone")
        #expect(result.status == 0, "stderr: \(result.errorOutput)")
        #expect(result.output.contains("notes/a.md: resolved"), "\(result.output)")
        let onPhone = try phone.json("versions", "notes/a.md"), onLaptop = try laptop.json("versions", "notes/a.md")
        #expect(onPhone["state"] as? String == "settled")
        #expect(onLaptop["state"] as? String == "settled", "the resolution went back to the laptop in the same sync")
        #expect((onPhone["current"] as? [String: Any])?["id"] as? String == (onLaptop["current"] as? [String: Any])?["id"] as? String)
        #expect(try phone.run("cat", "notes/a.md").output == "A\nb\nC\n")
        // Who ran it is in the phone's log and journal, not in the commit.
        let log = try phone.run("log", "notes/a.md").output
        #expect(log.split(separator: "\n").first?.hasSuffix("resolution by three-way  [run here by phone]") == true, "\(log)")
    }

    @Test func syncResolveExitsOneNamingWhatNeedsAPersonAndWritesNothingForIt() throws {
        let (laptop, phone) = try Self.conflictedPair(phoneText: "B\nb\nc\n")
        let json = try phone.run("sync", laptop.path, "--resolve", "--json")
        #expect(json.status == 1, "stderr: \(json.errorOutput)")
        let report = try #require(try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any])
        #expect(report["needsPerson"] as? [String] == ["notes/a.md"])
        #expect(report["resolved"] as? [String] == [])
        #expect(try phone.json("versions", "notes/a.md")["state"] as? String == "inConflict")
    }

    @Test func explainSaysWhenHeadsHoldIdenticalContent() throws {
        let (laptop, phone) = try Self.conflictedPair(phoneText: "A\nb\nc\n")
        #expect(try phone.run("sync", laptop.path).status == 0)
        let status = try phone.run("status")
        #expect(status.output == "no documents in conflict\n", "\(status.output)")
        let explain = try phone.run("explain", "notes/a.md").output
        #expect(explain.contains("hold identical content and count as one"), "\(explain)")
        let all = try phone.run("resolve", "--all", "--device", "phone")
        #expect(all.status == 0, "stderr: \(all.errorOutput)")
        #expect(all.output.contains("identical-content"), "\(all.output)")
        #expect(try phone.gitInStore("for-each-ref", "--format=%(objectname)", "refs/truce/heads/").output.split(separator: "\n").count == 1)
    }
}
