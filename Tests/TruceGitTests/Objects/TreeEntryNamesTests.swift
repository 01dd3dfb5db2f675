import Foundation
import TestSupport
import Testing

@testable import TruceGit

/// How the checks of what another store sent judge a tree entry's name (`TreeEntryNames.swift`).
@Suite(.timeLimit(.minutes(10))) struct TreeEntryNamesTests {
    /// Once one blob has passed as a tree entry, a blob's entry is judged by its name alone: libgit2 no longer reads
    /// each blob's header (the callers check each blob themselves), and a name it refuses is still refused.
    @Test func aBlobEntryIsJudgedByItsNameOnceABlobHasPassed() throws {
        let fixture = try PackWriterTests.Fixture()
        let repository = try Repository.openBare(at: fixture.path)
        let blob = try repository.writeBlob(Data("content\n".utf8))
        let absent = ObjectID(hex: String(repeating: "ab", count: 20))!
        #expect(repository.treeEntryNameProblem("first.txt", id: absent, isTree: false) != nil, "no blob has passed yet")
        #expect(repository.treeEntryNameProblem(".git", id: blob, isTree: false) != nil)
        #expect(repository.treeEntryNameProblem("first.txt", id: blob, isTree: false) == nil)
        #expect(repository.treeEntryNameProblem("second.txt", id: absent, isTree: false) == nil)
        #expect(repository.treeEntryNameProblem(".git", id: absent, isTree: false) != nil)
        #expect(repository.treeEntryNameProblem("a/b", id: absent, isTree: false) != nil)
        #expect(repository.treeEntryNameProblem("folder", id: absent, isTree: true) != nil, "a tree's own id is still read")
    }

    /// Names tried in memory once a blob has passed get the verdicts the store itself gives, under the store's config:
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
        #expect(repository.blobNameCheck != nil, "the first blob passed: later names are tried in memory")
        for name in names {
            #expect((repository.treeEntryNameProblem(name, id: blob, isTree: false) == nil) == verdicts[name], "\(name) under \(setting)")
        }
    }
}
