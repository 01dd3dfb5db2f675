import Foundation
import TestSupport
import Testing

@testable import TruceGit

/// History walks (`Graph.swift`), against `git rev-list` and `git log` on the same repository.
@Suite(.timeLimit(.minutes(10))) struct GraphTests {
    /// `forEachCommit` reads commits from their bytes, past libgit2's cache; a commit git's fsck refuses but libgit2
    /// reads (here a zero-padded author date) is read by libgit2 instead, and the walk goes on through it.
    @Test func everyCommitIsVisitedOnceWithItsTreeEvenOneFsckRefuses() throws {
        let history = try LocalPushTests.History()
        let source = history.source
        let tree = try source.git("rev-parse", "\(history.second.hex)^{tree}").output.trimmingCharacters(in: .whitespacesAndNewlines)
        let raw = "tree \(tree)\nparent \(history.second.hex)\nauthor A <a@a> 0100 +0000\ncommitter A <a@a> 100 +0000\n\nodd\n"
        let written = try git(["-C", source.path, "hash-object", "-t", "commit", "--literally", "-w", "--stdin"], input: .text(raw))
        let odd = try #require(ObjectID(hex: written.output.trimmingCharacters(in: .whitespacesAndNewlines)), "\(written.errorOutput)")
        #expect(commitHeaderProblem(Array(raw.utf8)) != nil, "git's fsck rules refuse it")

        var visited: [ObjectID: ObjectID] = [:]
        try Repository.openBare(at: source.path).forEachCommit(reachableFrom: [odd, history.first]) { commit, tree in
            #expect(visited.updateValue(tree, forKey: commit) == nil, "\(commit) visited twice")
        }
        let log = try source.git("log", "--format=%H %T", odd.hex).output.split(separator: "\n")
        let expected = Dictionary(
            uniqueKeysWithValues: log.map { line in
                (ObjectID(hex: String(line.prefix(40)))!, ObjectID(hex: String(line.suffix(40)))!)
            })
        #expect(expected.count == 3 && visited == expected)

        var entered: [ObjectID] = []
        try Repository.openBare(at: source.path).forEachCommit(
            reachableFrom: [odd],
            entering: { id in
                entered.append(id)
                return id != history.second
            }, { _, _ in })
        #expect(entered == [odd, history.second], "a commit not entered is not read, nor its parents through it")
    }
}
