import Foundation
import TestSupport
import Testing

@testable import TruceGit

/// How the checks of what another store sent judge a tree entry's name (`TreeEntryNames.swift`).
@Suite(.timeLimit(.minutes(10))) struct TreeEntryNamesTests {
    /// Once one blob has passed as a tree entry, a blob's entry is judged by its name alone, and once one tree has, a
    /// tree's: libgit2 no longer reads each object's header (the callers read each object themselves), and a name it
    /// refuses is still refused. Until an entry of its kind passes, the object is read: an absent one, or one of the
    /// other kind, is refused (put back a check that takes a tree once a blob has passed: it fails).
    @Test func anEntryIsJudgedByItsNameOnceOneOfItsKindHasPassed() throws {
        let fixture = try PackWriterTests.Fixture()
        let repository = try Repository.openBare(at: fixture.path)
        let blob = try repository.writeBlob(Data("content\n".utf8))
        let tree = try repository.writeTree([TreeEntry(name: "file", id: blob, isTree: false)])
        let absent = ObjectID(hex: String(repeating: "ab", count: 20))!
        #expect(repository.treeEntryNameProblem("first.txt", id: absent, isTree: false) != nil, "no blob has passed yet")
        #expect(repository.treeEntryNameProblem(".git", id: blob, isTree: false) != nil)
        #expect(repository.treeEntryNameProblem("first.txt", id: blob, isTree: false) == nil)
        #expect(repository.treeEntryNameProblem("second.txt", id: absent, isTree: false) == nil)
        #expect(repository.treeEntryNameProblem(".git", id: absent, isTree: false) != nil)
        #expect(repository.treeEntryNameProblem("a/b", id: absent, isTree: false) != nil)
        #expect(repository.treeEntryNameProblem("folder", id: absent, isTree: true) != nil, "no tree has passed yet")
        #expect(repository.treeEntryNameProblem("folder", id: blob, isTree: true) != nil, "a blob is no tree")
        #expect(repository.treeEntryNameProblem("folder", id: tree, isTree: true) == nil)
        #expect(repository.treeEntryNameProblem("other", id: absent, isTree: true) == nil)
        #expect(repository.treeEntryNameProblem(".git", id: absent, isTree: true) != nil)
        #expect(repository.treeEntryNameProblem("..", id: absent, isTree: true) != nil)
    }

    /// Names tried in memory once a blob (or a tree) has passed get the verdicts the store itself gives, under its config:
    /// `core.protectNTFS` and `core.protectHFS` on or off decide names such as `git~1` and `.gi\u{200C}t`.
    @Test(arguments: [[String](), ["core.protectNTFS", "false"], ["core.protectHFS", "true"]])
    func aBlobNameTriedInMemoryGetsTheStoresVerdict(_ setting: [String]) throws {
        let fixture = try PackWriterTests.Fixture()
        if !setting.isEmpty { #expect(try git(["-C", fixture.path, "config"] + setting).status == 0) }
        let blob = try Repository.openBare(at: fixture.path).writeBlob(Data("content\n".utf8))
        let names = [
            "ok.txt", ".git", ".GIT", "git~1", "GIT~1", ".git ", ".git.", ".gi\u{200C}t", ".Git\u{FEFF}", "..", ".", "a/b", "con", "x:y",
            ".gitmodules", "caf\u{E9}",
        ]
        var verdicts: [String: Bool] = [:]
        for name in names {
            // A fresh handle, where no blob has passed: the name is tried in the store itself, with the blob's own id.
            verdicts[name] = try Repository.openBare(at: fixture.path).treeEntryNameProblem(name, id: blob, isTree: false) == nil
        }
        #expect(verdicts[".git"] == false && verdicts["ok.txt"] == true)
        #expect(verdicts["git~1"] == (setting == ["core.protectNTFS", "false"]), "\(setting) decides git~1")
        #expect(verdicts[".gi\u{200C}t"] == (setting != ["core.protectHFS", "true"]), "\(setting) decides .gi\u{200C}t")
        let repository = try Repository.openBare(at: fixture.path)
        #expect(repository.treeEntryNameProblem("first.txt", id: blob, isTree: false) == nil)
        #expect(repository.entryNameCheck != nil, "the first blob passed: later names are tried in memory")
        for name in names {
            #expect((repository.treeEntryNameProblem(name, id: blob, isTree: false) == nil) == verdicts[name], "\(name) under \(setting)")
        }
        // Trees the same way: each name tried in the store with a real tree, then in memory once one tree has passed.
        let tree = try repository.writeTree([TreeEntry(name: "file", id: blob, isTree: false)])
        var treeVerdicts: [String: Bool] = [:]
        for name in names {
            treeVerdicts[name] = try Repository.openBare(at: fixture.path).treeEntryNameProblem(name, id: tree, isTree: true) == nil
        }
        #expect(treeVerdicts[".git"] == false && treeVerdicts["ok.txt"] == true)
        #expect(repository.treeEntryNameProblem("folder", id: tree, isTree: true) == nil)
        for name in names {
            #expect((repository.treeEntryNameProblem(name, id: tree, isTree: true) == nil) == treeVerdicts[name], "tree \(name) under \(setting)")
        }
    }
}
