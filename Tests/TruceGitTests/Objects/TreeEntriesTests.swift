import Foundation
import TestSupport
import Testing

@testable import TruceGit

/// Trees read from their bytes (`TreeEntries`) give what `git ls-tree` gives, and bytes that are no tree give nothing.
@Suite(.timeLimit(.minutes(10))) struct TreeEntriesTests {
    /// A tree of every mode git writes, made by `git mktree`: each entry's id and kind, as `git ls-tree` lists them, with
    /// the submodule's commit left out.
    @Test func aTreeOfEveryModeReadsAsGitListsIt() throws {
        let directory = TemporaryDirectory("tree-entries")
        let path = directory.file("repo")
        #expect(try git(["init", "-q", "--bare", path]).status == 0)
        func hash(_ text: String) throws -> String {
            try git(["-C", path, "hash-object", "-w", "--stdin"], input: .text(text)).output.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let blob = try hash("file\n"), script = try hash("#!/bin/sh\n"), link = try hash("target")
        let inner = try git(["-C", path, "mktree"], input: .text("100644 blob \(blob)\tinside.txt\n")).output
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let submodule = String(repeating: "5", count: 40)
        let listing = [
            "100644 blob \(blob)\tplain.txt", "100755 blob \(script)\trun.sh", "120000 blob \(link)\tlink",
            "040000 tree \(inner)\tfolder", "160000 commit \(submodule)\tmodule", "100644 blob \(blob)\tnamé with space",
        ]
        let tree = try git(["-C", path, "mktree", "--missing"], input: .text(listing.joined(separator: "\n") + "\n")).output
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let raw = try git(["-C", path, "cat-file", "tree", tree]).stdout

        let parsed = try #require(TreeEntries.parse(Array(raw)))
        let listed = try git(["-C", path, "ls-tree", tree]).output.split(separator: "\n").compactMap { line -> TreeEntries.Entry? in
            let fields = line.split(separator: " ", maxSplits: 2)
            guard fields[1] != "commit", let id = ObjectID(hex: String(fields[2].prefix(40))) else { return nil }
            return TreeEntries.Entry(id: id, isTree: fields[1] == "tree")
        }
        #expect(parsed == listed)
        #expect(parsed.count == 5)
        #expect(TreeEntries.parse([]) == [])
    }

    /// Bytes that are no tree: a mode that is not octal or has no end, an empty name, an id cut short.
    @Test(arguments: [
        "100648 a\0", "100644", "100644 \0", " a\0", "1006440000 a\0",
    ])
    func bytesThatAreNoTreeGiveNothing(entry: String) throws {
        #expect(TreeEntries.parse(Array(entry.utf8) + Array(repeating: 7, count: 20)) == nil)
        #expect(TreeEntries.parse(Array("100644 a\0".utf8) + Array(repeating: 7, count: 19)) == nil)
    }
}
