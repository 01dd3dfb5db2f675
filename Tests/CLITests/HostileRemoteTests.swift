import Foundation
import TestSupport
import Testing

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
    func commit(
        tree: String, parents: [String] = [], key: String, author: String = "evil <evil@truce> 1700000000 +0000",
        message: String? = nil, afterAuthor: String = "", afterCommitter: String = ""
    ) throws -> String {
        var header = "tree \(tree)\n" + parents.map { "parent \($0)\n" }.joined()
        header += "author \(author)\n\(afterAuthor)committer evil <evil@truce> 1700000000 +0000\n\(afterCommitter)\n"
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

/// The heads an attacker crafts: one canonical, and every way of breaking git's or Truce's rules.
enum CraftedHead: String, CaseIterable {
    case canonical, dotGitEntry, dotGitKey, ntfsShortName, zeroPaddedMode, executableMode, extraEntry
    case zeroPaddedDate, badTimeZone, notAVersion, badParent
    /// Two author lines, before the committer or after it: git fsck's `multipleAuthors`, `missingCommitter`.
    case twoAuthors, authorAfterCommitter
    /// An author libgit2 cannot even parse.
    case unparseableAuthor
    /// A valid version whose author name holds terminal escapes and a bell: adopted, and escaped wherever it is shown.
    case controlCharacterAuthor

    var isGood: Bool { self == .canonical || self == .controlCharacterAuthor }

    /// Crafts a head of this kind for a document named after `name`, makes it a head there, and returns its key and id.
    func craft(_ name: String, in hostile: HostileStore) throws -> (key: String, head: String) {
        let evil = try hostile.blob("evil \(name)\n")
        let dotGit = try hostile.tree([("100644", "config", try hostile.blob("[core]\n\thooksPath = /tmp\n"))])
        let key = self == .dotGitKey ? ".git/\(name)" : self == .ntfsShortName ? "GIT~1/\(name)" : name
        let canonical = try hostile.canonicalTree(key: key, text: "content of \(name)\n")
        let commit: String
        switch self {
        case .canonical: commit = try hostile.commit(tree: canonical, key: key)
        case .dotGitEntry: commit = try hostile.commit(tree: try hostile.tree([("40000", ".git", dotGit), ("100644", key, evil)]), key: key)
        case .dotGitKey: commit = try hostile.commit(tree: try hostile.tree([("40000", ".git", dotGit)]), key: key)
        case .ntfsShortName: commit = try hostile.commit(tree: try hostile.tree([("40000", "GIT~1", dotGit)]), key: key)
        case .zeroPaddedMode: commit = try hostile.commit(tree: try hostile.tree([("0100644", key, evil)]), key: key)
        case .executableMode: commit = try hostile.commit(tree: try hostile.tree([("100755", key, evil)]), key: key)
        case .extraEntry: commit = try hostile.commit(tree: try hostile.tree([(("100644", key, evil)), ("100644", key + "~", evil)]), key: key)
        case .zeroPaddedDate: commit = try hostile.commit(tree: canonical, key: key, author: "evil <evil@truce> 01700000000 +0000")
        case .badTimeZone: commit = try hostile.commit(tree: canonical, key: key, author: "evil <evil@truce> 1700000000 +00")
        case .notAVersion: commit = try hostile.commit(tree: canonical, key: key, message: "not a version\n")
        case .twoAuthors: commit = try hostile.commit(tree: canonical, key: key, afterAuthor: "author evil2 <evil@truce> 1700000001 +0000\n")
        case .authorAfterCommitter:
            commit = try hostile.commit(tree: canonical, key: key, afterCommitter: "author evil2 <evil@truce> 1700000001 +0000\n")
        case .badParent:
            // A clean head on top of a bad parent: the history it brings is checked, not just its tip.
            let parent = try hostile.commit(tree: try hostile.tree([("40000", ".git", dotGit), ("100644", key, evil)]), key: key)
            commit = try hostile.commit(tree: canonical, parents: [parent], key: key)
        case .unparseableAuthor: commit = try hostile.commit(tree: canonical, key: key, author: "evil evil@truce 1700000000 +0000")
        case .controlCharacterAuthor:
            commit = try hostile.commit(tree: canonical, key: key, author: "\u{1B}[31mEVIL\u{1B}[0m\u{07} <evil@truce> 1700000000 +0000")
        }
        try hostile.publish(commit, as: key)
        return (key, commit)
    }
}

@Suite(.timeLimit(.minutes(10))) struct HostileRemoteTests {
    @Test func syncRefusesEveryCraftedBadHeadByNameAdoptsTheGoodOnesAndKeepsFsckClean() throws {
        let directory = TemporaryDirectory("truce-hostile")
        let hostile = try HostileStore(in: directory)
        let local = try CLIStore()
        var bad: [String: String] = [:]
        for kind in CraftedHead.allCases where !kind.isGood {
            let crafted = try kind.craft("\(kind.rawValue).md", in: hostile)
            bad[crafted.key] = crafted.head
        }
        let saved = try truce(["save", "good.md", "-"], store: hostile.path, input: .text("good\n"))
        _ = try CraftedHead.canonical.craft("notes/crafted.md", in: hostile)

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
        #expect(try local.run("cat", "notes/crafted.md").output == "content of notes/crafted.md\n")
        #expect(saved.status == 0)
        for key in bad.keys where !key.contains("/") { #expect(try local.run("versions", key).status == 2, "\(key) was adopted") }
        #expect(try Reliability.fsckProblems(local.path) == [])
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: local.path + "/objects").filter { $0.hasPrefix("tmp_") }
        #expect(leftovers.isEmpty, "the quarantine stayed: \(leftovers)")

        let again = try local.run("sync", remote)
        #expect(again.status == 3 && again.output.hasPrefix("received 0 version(s)"), "second sync: \(again.output) \(again.errorOutput)")
        #expect(try Reliability.fsckProblems(local.path) == [])
    }
}
