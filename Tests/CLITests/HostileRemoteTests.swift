import Foundation
import Testing
import TestSupport

/// A Truce store whose heads were crafted with `git hash-object --literally` and `git mktree`, as an attacker would.
struct HostileStore {
    let path: String

    init(in directory: TemporaryDirectory) throws {
        path = directory.file("hostile")
        let result = try truce(["init"], store: path)
        guard result.status == 0 else { throw ReliabilityFailure("truce init: \(result.errorOutput)") }
    }

    /// Writes an object without any of git's checks and returns its id.
    func write(_ type: String, _ bytes: Data) throws -> String {
        let result = try git(["-C", path, "hash-object", "-t", type, "--literally", "-w", "--stdin"], input: bytes)
        guard result.status == 0 else { throw ReliabilityFailure("git hash-object -t \(type): \(result.errorOutput)") }
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func blob(_ text: String) throws -> String { try write("blob", .text(text)) }

    /// A tree of `entries` in the given order and modes, exactly as written: `mode name\0<20 bytes>` each.
    func tree(_ entries: [(mode: String, name: String, id: String)]) throws -> String {
        var bytes = Data()
        for entry in entries {
            bytes += Data("\(entry.mode) \(entry.name)\0".utf8)
            bytes += Data(stride(from: 0, to: 40, by: 2).map { UInt8(entry.id.dropFirst($0).prefix(2), radix: 16)! })
        }
        return try write("tree", bytes)
    }

    /// A commit with a Truce version message for `key` (unless `message` is given) and the header lines as given.
    func commit(tree: String, parents: [String] = [], key: String, author: String = "evil <evil@truce> 1700000000 +0000",
                message: String? = nil) throws -> String {
        var header = "tree \(tree)\n" + parents.map { "parent \($0)\n" }.joined()
        header += "author \(author)\ncommitter evil <evil@truce> 1700000000 +0000\n\n"
        return try write("commit", .text(header + (message ?? "Save \(key)\n\nDocument: \(key)\nDevice: evil\n")))
    }

    /// Makes `commit` a head of `key` where Truce keeps heads: `refs/truce/heads/<key hash>/<id>`.
    func publish(_ commit: String, as key: String) throws {
        let hash = try git(["hash-object", "--stdin"], input: .text(key)).output.trimmingCharacters(in: .whitespacesAndNewlines)
        let result = try git(["-C", path, "update-ref", "refs/truce/heads/\(hash.prefix(2))/\(hash.dropFirst(2))/\(commit)", commit])
        guard result.status == 0 else { throw ReliabilityFailure("git update-ref: \(result.errorOutput)") }
    }

    /// A canonical version of `key` holding `text`: one tree per segment, as Truce writes it.
    func canonicalTree(key: String, text: String) throws -> String {
        var segments = key.split(separator: "/").map(String.init)
        var id = try tree([("100644", segments.removeLast(), try blob(text))])
        for segment in segments.reversed() { id = try tree([("40000", segment, id)]) }
        return id
    }
}

@Suite struct HostileRemoteTests {
    /// Every way a crafted head breaks git's or Truce's rules, each as the head of its own document: key → head commit.
    ///
    /// With `unparseableIdent`, also a commit whose author libgit2 cannot even parse: its local transport parses the
    /// other store's commits itself and fails the whole fetch on one, so only a server (git://, ssh, https) gets that far.
    static func craftBadHeads(in hostile: HostileStore, unparseableIdent: Bool) throws -> [String: String] {
        var heads: [String: String] = [:]
        let evil = try hostile.blob("evil\n")
        let dotGit = try hostile.tree([("100644", "config", try hostile.blob("[core]\n\thooksPath = /tmp\n"))])
        func head(_ key: String, _ commit: String) throws { heads[key] = commit; try hostile.publish(commit, as: key) }

        try head("dotgit.md", try hostile.commit(tree: try hostile.tree([("40000", ".git", dotGit), ("100644", "dotgit.md", evil)]), key: "dotgit.md"))
        try head(".git/config", try hostile.commit(tree: try hostile.tree([("40000", ".git", dotGit)]), key: ".git/config"))
        try head("GIT~1/config", try hostile.commit(tree: try hostile.tree([("40000", "GIT~1", dotGit)]), key: "GIT~1/config"))
        try head("padded.md", try hostile.commit(tree: try hostile.tree([("0100644", "padded.md", evil)]), key: "padded.md"))
        try head("run.md", try hostile.commit(tree: try hostile.tree([("100755", "run.md", evil)]), key: "run.md"))
        try head("extra.md", try hostile.commit(tree: try hostile.tree([("100644", "extra.md", evil), ("100644", "other.txt", evil)]), key: "extra.md"))
        if unparseableIdent {
            try head("author.md", try hostile.commit(tree: try hostile.canonicalTree(key: "author.md", text: "x\n"), key: "author.md",
                                                      author: "evil evil@truce 1700000000 +0000"))
        }
        try head("padded-date.md", try hostile.commit(tree: try hostile.canonicalTree(key: "padded-date.md", text: "x\n"), key: "padded-date.md",
                                                       author: "evil <evil@truce> 01700000000 +0000"))
        try head("zone.md", try hostile.commit(tree: try hostile.canonicalTree(key: "zone.md", text: "x\n"), key: "zone.md",
                                                author: "evil <evil@truce> 1700000000 +00"))
        try head("plain.md", try hostile.commit(tree: try hostile.canonicalTree(key: "plain.md", text: "x\n"), key: "plain.md",
                                                 message: "not a version\n"))
        // A clean head on top of a bad parent: the history it brings is checked, not just its tip.
        let badParent = try hostile.commit(tree: try hostile.tree([("40000", ".git", dotGit), ("100644", "history.md", evil)]), key: "history.md")
        try head("history.md", try hostile.commit(tree: try hostile.canonicalTree(key: "history.md", text: "x\n"), parents: [badParent], key: "history.md"))
        return heads
    }

    @Test func syncRefusesEveryCraftedBadHeadByNameAdoptsTheGoodOnesAndKeepsFsckClean() throws {
        let directory = TemporaryDirectory("truce-hostile")
        let hostile = try HostileStore(in: directory)
        let local = try CLIStore()
        let bad = try Self.craftBadHeads(in: hostile, unparseableIdent: false)
        let saved = try truce(["save", "good.md", "-"], store: hostile.path, input: .text("good\n"))
        let crafted = try hostile.commit(tree: try hostile.canonicalTree(key: "notes/crafted.md", text: "by hand\n"), key: "notes/crafted.md")
        try hostile.publish(crafted, as: "notes/crafted.md")

        let remote = hostile.path
        let sync = try local.run("sync", remote)
        #expect(sync.status == 3, "sync: \(sync.output) \(sync.errorOutput)")
        #expect(sync.output.hasPrefix("received 2 version(s)"), "\(sync.output)")
        let lines = sync.errorLines
        #expect(lines.count == bad.count, "one line per refused head: \(lines)")
        for (key, head) in bad {
            #expect(lines.contains { $0.hasPrefix("truce: refused head \(head) from ") }, "\(key): \(head) not refused by name in \(lines)")
            #expect(try git(["-C", local.path, "cat-file", "-e", head]).status != 0, "\(key): the refused head's commit is in the store")
        }
        #expect(try local.run("cat", "good.md").output == "good\n")
        #expect(try local.run("cat", "notes/crafted.md").output == "by hand\n")
        #expect(saved.status == 0)
        for key in ["dotgit.md", "padded.md", "history.md"] { #expect(try local.run("versions", key).status == 2, "\(key) was adopted") }
        #expect(try Reliability.fsckProblems(local.path) == [])
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: local.path + "/objects").filter { $0.hasPrefix("tmp_") }
        #expect(leftovers.isEmpty, "the quarantine stayed: \(leftovers)")

        let again = try local.run("sync", remote)
        #expect(again.status == 3 && again.output.hasPrefix("received 0 version(s)"), "second sync: \(again.output) \(again.errorOutput)")
        #expect(try Reliability.fsckProblems(local.path) == [])
    }

    @Test func aCommitLibgit2CannotParseFailsALocalSyncWholeAndChangesNothing() throws {
        let directory = TemporaryDirectory("truce-hostile")
        let hostile = try HostileStore(in: directory)
        let local = try CLIStore()
        _ = try Self.craftBadHeads(in: hostile, unparseableIdent: true)
        let before = snapshot(ofStore: local.path)
        let sync = try local.run("sync", hostile.path)
        #expect(sync.status == 2 && sync.errorLines.count == 1 && sync.errorLines[0].contains("malformed e-mail"), "\(sync.errorLines)")
        #expect(snapshot(ofStore: local.path) == before, "a failed sync changed the store")
    }
}
