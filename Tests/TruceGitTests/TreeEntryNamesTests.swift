import Foundation
import TestSupport
import Testing

@testable import TruceGit

/// The checks of objects another store sent (`ObjectChecks.swift`) that stand apart from a sync.
@Suite(.timeLimit(.minutes(10))) struct ObjectChecksTests {
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
}
