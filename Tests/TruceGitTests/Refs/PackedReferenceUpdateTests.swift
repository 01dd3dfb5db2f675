import Foundation
import TestSupport
import Testing

@testable import TruceGit

/// Truce's rewrite of `packed-refs` (`PackedReferenceUpdate.swift`) against `git pack-refs --all`: two copies of one
/// repository take the same changes, one through `PackedReferences.update`, the other through `git update-ref` and
/// `git pack-refs --all --prune`, and must end with the same file, byte for byte, which git and Truce read alike.
@Suite(.timeLimit(.minutes(10))) struct PackedReferenceUpdateTests {
    /// Runs git with no system or user config and a fixed identity and date, so that two runs write the same objects.
    @discardableResult
    static func git(_ path: String, _ arguments: [String]) throws -> String {
        let result = try run(
            "/usr/bin/env", ["git", "-C", path] + arguments,
            environment: [
                "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
                "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_AUTHOR_DATE": "1764582000 +0100", "GIT_COMMITTER_DATE": "1764582000 +0100",
            ])
        try #require(result.status == 0, "git \(arguments.joined(separator: " ")): \(result.errorOutput)")
        return result.output
    }

    /// A repository made by libgit2 (`truce`) with commits, annotated tags (one of them a tag of a tag), a lightweight
    /// tag and a reference outside refs/tags naming a tag object, all packed by `git pack-refs --all`; and `git`, a copy of it.
    final class Fixture {
        let directory = TemporaryDirectory("truce-packed-refs-update")
        var truce: String { directory.file("truce.git") }
        var git: String { directory.file("git.git") }
        let commits: [ObjectID]
        let tags: [String: ObjectID]

        init() throws {
            let path = directory.file("truce.git")
            _ = try Repository.createBare(at: path)
            let tree = try PackedReferenceUpdateTests.git(path, ["mktree"]).trimmingCharacters(in: .newlines)
            var commits: [ObjectID] = []
            for number in 0..<4 {
                let parents = commits.last.map { ["-p", $0.hex] } ?? []
                let id = try PackedReferenceUpdateTests.git(path, ["commit-tree", tree, "-m", "c\(number)"] + parents)
                commits.append(try #require(ObjectID(hex: id.trimmingCharacters(in: .newlines))))
            }
            self.commits = commits
            try PackedReferenceUpdateTests.git(path, ["tag", "-a", "v1", "-m", "one", commits[1].hex])
            try PackedReferenceUpdateTests.git(path, ["-c", "advice.nestedTag=false", "tag", "-a", "v2", "-m", "two", "refs/tags/v1"])
            try PackedReferenceUpdateTests.git(path, ["tag", "light", commits[2].hex])
            var tags: [String: ObjectID] = [:]
            for name in ["v1", "v2"] {
                let hex = try PackedReferenceUpdateTests.git(path, ["rev-parse", "refs/tags/\(name)"]).trimmingCharacters(in: .newlines)
                let id = try #require(ObjectID(hex: hex))
                tags[name] = id
            }
            self.tags = tags
            for (name, target) in [("refs/heads/main", commits[3].hex), ("refs/named/tagged", tags["v1"]!.hex), ("refs/heads/old", commits[0].hex)] {
                try PackedReferenceUpdateTests.git(path, ["update-ref", name, target])
            }
            try PackedReferenceUpdateTests.git(path, ["pack-refs", "--all", "--prune"])
            try FileManager.default.copyItem(atPath: path, toPath: directory.file("git.git"))
        }

        /// Makes the same change in both copies: Truce's rewrite in `truce`, git's commands in `git`.
        func change(adding additions: [(name: String, target: ObjectID)], removing removals: Set<String>) throws {
            try PackedReferences.update(in: truce + "/", adding: additions, removing: removals)
            for name in removals.sorted() { try PackedReferenceUpdateTests.git(git, ["update-ref", "-d", name]) }
            for (name, target) in additions { try PackedReferenceUpdateTests.git(git, ["update-ref", name, target.hex]) }
            try PackedReferenceUpdateTests.git(git, ["pack-refs", "--all", "--prune"])
        }

        func packedRefs(of path: String) throws -> String {
            try String(contentsOfFile: path + "/packed-refs", encoding: .utf8)
        }
    }

    @Test func addingAndRemovingLinesWritesTheFileGitPackRefsWrites() throws {
        let fixture = try Fixture()
        let original = try fixture.packedRefs(of: fixture.truce)
        #expect(original.hasPrefix(PackedReferences.header), "git's header is Truce's")
        #expect(original.contains("\(fixture.tags["v2"]!.hex) refs/tags/v2\n^\(fixture.commits[1].hex)\n"), "a tag of a tag peels to its commit")
        let c = fixture.commits
        // Names around and between the tags' records, whose byte order is not the order of their words: upper case before
        // lower, '-' and '.' before '/', digits before letters, and a name that is not ASCII after all of them.
        try fixture.change(
            adding: [
                ("refs/heads/a/b", c[0]), ("refs/heads/a-b", c[1]), ("refs/heads/a.b", c[2]), ("refs/heads/B", c[3]), ("refs/heads/a0", c[0]),
                ("refs/heads/\u{E9}t\u{E9}", c[1]), ("refs/tags/v0", c[2]), ("refs/tags/v1a", c[3]), ("refs/z", c[0]), ("refs/heads/main", c[1]),
            ],
            removing: ["refs/heads/old", "refs/tags/v2"])
        #expect(try fixture.packedRefs(of: fixture.truce) == fixture.packedRefs(of: fixture.git))
        // Again from there: an update of a name already packed, a tag's record removed and one kept, a last name.
        try fixture.change(adding: [("refs/heads/a-b", c[3]), ("refs/zz", c[1])], removing: ["refs/tags/v1a", "refs/heads/B", "refs/z"])
        let file = try fixture.packedRefs(of: fixture.truce)
        #expect(file == (try fixture.packedRefs(of: fixture.git)))
        #expect(file.contains("\(fixture.tags["v1"]!.hex) refs/tags/v1\n^\(c[1].hex)\n"), "the kept tag keeps its peeled line")
        #expect(file.contains("\(fixture.tags["v1"]!.hex) refs/named/tagged\n^\(c[1].hex)\n"), "so does another reference naming a tag")
        #expect(!file.contains("refs/tags/v2") && !file.contains("refs/heads/old"))

        // git reads Truce's file as its own, and Truce reads it as git does.
        for command in [["show-ref", "-d"], ["for-each-ref", "--format=%(refname) %(objectname) %(*objectname)"]] {
            #expect(try Self.git(fixture.truce, command) == Self.git(fixture.git, command), "git \(command.joined(separator: " "))")
        }
        let shown = try Self.git(fixture.truce, ["show-ref", "-d"]).split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        let packed = try PackedReferences(readingIn: fixture.truce + "/").references(withPrefix: "refs/")
        #expect(packed.map { "\($0.name) \($0.target.hex)" } == shown.filter { !$0[1].hasSuffix("^{}") }.map { "\($0[1]) \($0[0])" })
        let repository = try Repository.openBare(at: fixture.truce)
        #expect(try repository.referenceTargets() == Set(shown.map { ObjectID(hex: $0[0])! }), "targets and peeled targets, as show-ref -d")
        for (name, target) in packed { #expect(try repository.reference(name) == target, "\(name)") }
        let fsck = try run("/usr/bin/env", ["git", "-C", fixture.truce, "fsck", "--strict", "--no-dangling"])
        #expect(fsck.status == 0, "\(fsck.errorOutput)")
    }

    /// A file an older writer left (a header without `sorted`, records out of order) is written again whole, as git
    /// writes it when it packs the same references.
    @Test func anOlderWritersUnsortedFileComesOutAsGitPacksIt() throws {
        let fixture = try Fixture()
        let c = fixture.commits
        let names = ["refs/heads/y", "refs/heads/B", "refs/heads/a/b", "refs/heads/a-b"]
        let unsorted = "# pack-refs with: peeled \n" + zip(names, c).map { "\($1.hex) \($0)\n" }.joined()
        for path in [fixture.truce, fixture.git] {
            try Data(unsorted.utf8).write(to: URL(fileURLWithPath: path + "/packed-refs"))
            #expect(try Self.git(path, ["for-each-ref", "--format=%(refname)"]) == names.sorted().joined(separator: "\n") + "\n")
        }
        try fixture.change(adding: [("refs/heads/m", c[0])], removing: ["refs/heads/y"])
        #expect(try fixture.packedRefs(of: fixture.truce) == fixture.packedRefs(of: fixture.git))
        #expect(try fixture.packedRefs(of: fixture.truce).hasPrefix(PackedReferences.header))
    }
}
