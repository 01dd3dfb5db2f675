import Foundation
import TestSupport
import Testing

@testable import TruceGit

/// The checks of objects another store sent (`ObjectChecks.swift`), rule by rule against git on the same repository:
/// raw reads give the bytes git stores for the type asked and nothing for another; a one-entry tree's id is the one
/// `git mktree` writes; a commit passes exactly when `git fsck` takes it, and is then read as git reads it.
@Suite(.timeLimit(.minutes(10))) struct ObjectChecksTests {
    /// A bare repository made by libgit2, and git on it with no system or user config.
    final class Fixture {
        let directory = TemporaryDirectory("truce-object-checks")
        var path: String { directory.file("repo.git") }
        let repository: Repository

        init() throws { repository = try Repository.createBare(at: directory.file("repo.git")) }

        func git(_ arguments: [String], input: Data = Data()) throws -> ProcessResult {
            try run(
                "/usr/bin/env", ["git", "-C", path] + arguments, input: input,
                environment: [
                    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
                    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_AUTHOR_DATE": "1764582000 +0100",
                    "GIT_COMMITTER_DATE": "1764582000 +0100",
                ])
        }

        /// `git` that must succeed, its output trimmed: an object id, for the commands used here.
        func id(_ arguments: [String], input: Data = Data()) throws -> ObjectID {
            let result = try git(arguments, input: input)
            try #require(result.status == 0, "git \(arguments.joined(separator: " ")): \(result.errorOutput)")
            return try #require(ObjectID(hex: result.output.trimmingCharacters(in: .whitespacesAndNewlines)), "\(result.output)")
        }
    }

    /// Every raw read against `git cat-file`: a commit, a tree, a blob, an annotated tag and a commit git's fsck refuses
    /// (reading is not judging), loose, then packed by `git repack`, then read from the pack files directly
    /// (`directPackReads`, as a quarantine reads a borrowed store); a missing object is nil, or an error where asked.
    @Test func rawReadsGiveTheBytesGitStoresForTheTypeAskedAndNothingForAnother() throws {
        let fixture = try Fixture()
        let blob = try fixture.id(["hash-object", "-w", "--stdin"], input: .text("content\n"))
        let tree = try fixture.id(["mktree"], input: .text("100644 blob \(blob.hex)\tnote.md\n"))
        let commit = try fixture.id(["commit-tree", tree.hex, "-m", "save note.md"])
        let tag = try fixture.id(["mktag"], input: .text("object \(commit.hex)\ntype commit\ntag v1\ntagger t <t@t> 1764582000 +0100\n\nv1\n"))
        let odd = try fixture.id(
            ["hash-object", "-t", "commit", "-w", "--stdin", "--literally"],
            input: .text("tree \(tree.hex)\nauthor a <a> 01 +0000\ncommitter c <c> 1 +0000\n\nzero-padded date\n"))
        let missing = ObjectID(hex: String(repeating: "5", count: 40))!

        func checkReads(_ repository: Repository, _ stage: String) throws {
            for id in [blob, tree, commit, tag, odd] {
                let type = try fixture.git(["cat-file", "-t", id.hex]).output.trimmingCharacters(in: .newlines)
                let stored = Array(try fixture.git(["cat-file", type, id.hex]).stdout)
                #expect(try repository.rawCommit(id) == (type == "commit" ? stored : nil), "\(stage): rawCommit of a \(type)")
                #expect(try repository.rawCommitIfPresent(id) == (type == "commit" ? stored : nil), "\(stage): rawCommitIfPresent of a \(type)")
                #expect(try repository.rawTreeIfPresent(id) == (type == "tree" ? stored : nil), "\(stage): rawTreeIfPresent of a \(type)")
            }
            #expect(try repository.rawCommitIfPresent(missing) == nil && repository.rawTreeIfPresent(missing) == nil, "\(stage)")
            let error = #expect(throws: GitError.self, "\(stage)") { try repository.rawCommit(missing) }
            #expect(error?.isNotFound == true, "\(stage): \(String(describing: error))")
        }
        try checkReads(fixture.repository, "loose")
        // Into one pack, each of them (no reference reaches them: `git repack` would leave them loose), then no loose copy.
        let ids = [blob, tree, commit, tag, odd].map { $0.hex + "\n" }.joined()
        #expect(try fixture.git(["pack-objects", "-q", fixture.path + "/objects/pack/pack"], input: .text(ids)).status == 0)
        #expect(try fixture.git(["prune-packed"]).status == 0)
        #expect(try fixture.git(["count-objects", "-v"]).output.hasPrefix("count: 0\n"), "every object is packed")
        let packed = try Repository.openBare(at: fixture.path)
        try checkReads(packed, "packed")
        packed.directPackReads = try PackEntries(objectsDirectory: fixture.path + "/objects")
        try checkReads(packed, "read from the packs directly")
    }

    /// `treeHash(ofEntry:)` is the id `git mktree` gives the tree of that one entry, a blob (100644) or a tree
    /// (written 40000), for names of any bytes git takes; and the tree a zero-padded mode would make, which git's fsck
    /// refuses (zeroPaddedFilemode), has another id, so a check by id passes only the tree git writes.
    @Test func aOneEntryTreesIdIsTheTreeGitMktreeWrites() throws {
        let fixture = try Fixture()
        #expect(ObjectID.emptyTree == (try fixture.id(["mktree"])))
        let blob = try fixture.id(["hash-object", "-w", "--stdin"], input: .text("content\n"))
        let subtree = try fixture.id(["mktree"], input: .text("100644 blob \(blob.hex)\tleaf.md\n"))
        let names = ["note.md", "notes", "with space", ".hidden", "a-b_c.d", "caf\u{E9}", "e\u{301}", "\u{1F600}.txt", "10", "UPPER"]
        for name in names {
            for isTree in [false, true] {
                let id = isTree ? subtree : blob
                let line = isTree ? "040000 tree \(id.hex)\t\(name)\n" : "100644 blob \(id.hex)\t\(name)\n"
                let written = try fixture.id(["mktree"], input: .text(line))
                #expect(ObjectID.treeHash(ofEntry: name, id: id, isTree: isTree) == written, "\(isTree ? "tree" : "blob") \(name.debugDescription)")
                let bytes = Array(try fixture.git(["cat-file", "tree", written.hex]).stdout)
                #expect(bytes == Array((isTree ? "40000 " : "100644 ").utf8) + Array(name.utf8) + [0] + id.bytes)
            }
        }
        let fsck = try fixture.git(["fsck", "--strict", "--no-dangling"])
        #expect(fsck.status == 0, "git fsck --strict takes every tree mktree wrote: \(fsck.errorOutput)")

        let padded = try fixture.id(
            ["hash-object", "-t", "tree", "-w", "--stdin", "--literally"], input: Data(Array("040000 notes".utf8) + [0] + subtree.bytes))
        #expect(padded != ObjectID.treeHash(ofEntry: "notes", id: subtree, isTree: true))
        let refused = try fixture.git(["fsck", "--strict", "--no-dangling"])
        #expect(refused.status != 0 && refused.errorOutput.contains("zeroPaddedFilemode"), "\(refused.errorOutput)")
    }

    /// `commitHeaderProblem` finds nothing in a commit exactly when `git fsck` takes it, and `CommitRecord(fsckCleanRaw:)`
    /// then reads what `git log` prints: tree, parents, names and emails (trimmed at their ends, as git and libgit2
    /// trim them), seconds and zones, and the message (without the newlines that may open it: libgit2's reading,
    /// which Truce keeps, drops them; git prints them). A commit git refuses has a problem and no record.
    @Test func aCommitIsReadAsGitReadsItExactlyWhenGitsChecksTakeIt() throws {
        let fixture = try Fixture()
        let tree = ObjectID.emptyTree.hex
        try #require(try fixture.id(["mktree"]) == ObjectID.emptyTree)
        let parent = try fixture.id(["commit-tree", tree, "-m", "parent"])
        let rows: [(text: String, gitTakes: Bool)] = [
            (
                "tree \(tree)\nauthor Ada Lovelace <ada@truce.example> 1764582000 +0100\ncommitter laptop <l@truce> 1764582001 -0130\n\nsave a.md\n",
                true
            ),
            (
                "tree \(tree)\nparent \(parent.hex)\nparent \(parent.hex)\nauthor a  b  <a@b> 0 -1200\ncommitter c <> 9223372036854775807 +1400\n\nm\n",
                true
            ),
            ("tree \(tree)\nauthor caf\u{E9} \u{1F600} <x@y> 5 +0530\ncommitter c <c> 6 +0000\n\n\n\nafter blank lines\n", true),
            ("tree \(tree)\nauthor a <a> 5 +0000\ncommitter c <c> 6 +0000\nencoding ISO-8859-1\n\nsubject\n\nbody\n", true),
            ("tree \(tree)\nauthor a <a> 5 +0000\ncommitter c <c> 6 +0000\n\n", true),
            ("tree \(tree)\nauthor a <a> 05 +0000\ncommitter c <c> 6 +0000\n\nzero-padded date\n", false),
            ("tree \(tree)\nauthor a <a> 9223372036854775808 +0000\ncommitter c <c> 6 +0000\n\ndate overflows\n", false),
            ("tree \(tree)\nauthor a <a> 5 +000\ncommitter c <c> 6 +0000\n\nshort zone\n", false),
            ("tree \(tree)\nauthor a<a> 5 +0000\ncommitter c <c> 6 +0000\n\nno space before the email\n", false),
            ("tree \(tree)\ncommitter c <c> 6 +0000\n\nno author\n", false),
            ("tree \(tree)\nauthor a <a> 5 +0000\ncommitter c <c> 6 +0000", false),
        ]
        for (text, gitTakes) in rows {
            let raw = Array(text.utf8)
            let id = try fixture.id(["hash-object", "-t", "commit", "-w", "--stdin", "--literally"], input: Data(raw))
            let fsck = try fixture.git(["fsck", "--no-dangling"])
            #expect((fsck.status == 0) == gitTakes, "the row says what git does: \(text.debugDescription) \(fsck.errorOutput)")
            #expect((commitHeaderProblem(raw) == nil) == (fsck.status == 0), "\(text.debugDescription): \(commitHeaderProblem(raw) ?? "no problem")")
            let record = CommitRecord(id: id, fsckCleanRaw: raw)
            #expect((record != nil) == (fsck.status == 0), "\(text.debugDescription)")
            if let record {
                let format = "format:%T%x00%P%x00%an%x00%ae%x00%ad%x00%cn%x00%ce%x00%cd%x00%B"
                let shown = try fixture.git(["log", "-1", "--no-walk", "--date=raw", "--format=\(format)", id.hex]).stdout
                let fields = shown.split(separator: 0, maxSplits: 8, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
                try #require(fields.count == 9, "\(shown.escaped)")
                #expect(record.tree.hex == fields[0] && record.parents.map(\.hex) == fields[1].split(separator: " ").map(String.init))
                #expect(Self.ident(record.author) == [fields[2], fields[3], fields[4]], "\(text.debugDescription)")
                #expect(Self.ident(record.committer) == [fields[5], fields[6], fields[7]], "\(text.debugDescription)")
                #expect(Array(record.message.utf8) == Array(fields[8].utf8.drop { $0 == 0x0A }), "\(text.debugDescription)")
            }
            try FileManager.default.removeItem(atPath: fixture.path + "/objects/\(id.hex.prefix(2))/\(id.hex.dropFirst(2))")
        }
    }

    /// A signature as `git log --date=raw` prints it: name, email, and `seconds +hhmm`.
    static func ident(_ signature: Signature) -> [String] {
        let minutes = abs(Int(signature.offsetMinutes))
        let zone = (signature.offsetMinutes < 0 ? "-" : "+") + String(format: "%02d%02d", minutes / 60, minutes % 60)
        return [signature.name, signature.email, "\(signature.time) \(zone)"]
    }
}
