import Foundation
import TestSupport
import Testing

@testable import TruceGit

/// History walks (`Graph.swift`), against `git rev-list` and `git log` on the same repository.
@Suite(.timeLimit(.minutes(10))) struct GraphTests {
    /// A commit on `history`'s second that git's fsck rules refuse (a zero-padded author date) but libgit2 reads, with
    /// `message`; and the tree it shares with that commit.
    static func commitFsckRefuses(on history: LocalPushTests.History, message: String) throws -> (commit: ObjectID, tree: ObjectID) {
        let source = history.source
        let tree = try source.git("rev-parse", "\(history.second.hex)^{tree}").output.trimmingCharacters(in: .whitespacesAndNewlines)
        let raw = "tree \(tree)\nparent \(history.second.hex)\nauthor A <a@a> 0100 +0000\ncommitter A <a@a> 100 +0000\n\n" + message
        let written = try git(["-C", source.path, "hash-object", "-t", "commit", "--literally", "-w", "--stdin"], input: .text(raw))
        let odd = try #require(ObjectID(hex: written.output.trimmingCharacters(in: .whitespacesAndNewlines)), "\(written.errorOutput)")
        #expect(commitHeaderProblem(Array(raw.utf8)) != nil, "git's fsck rules refuse it")
        return (odd, try #require(ObjectID(hex: tree)))
    }

    /// `forEachCommit` reads commits from their bytes, past libgit2's cache; a commit git's fsck refuses but libgit2
    /// reads (here a zero-padded author date) is read by libgit2 instead, and the walk goes on through it.
    @Test func everyCommitIsVisitedOnceWithItsTreeEvenOneFsckRefuses() throws {
        let history = try LocalPushTests.History()
        let source = history.source
        let (odd, _) = try Self.commitFsckRefuses(on: history, message: "odd\n")

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

    /// The message `forEachCommit` hands out is the commit's, byte for byte, and `committerTime` its committer date:
    /// read from the bytes, and through libgit2 for the commit git's fsck rules refuse.
    @Test func eachCommitsMessageAndCommitterTimeAreGitsOwn() throws {
        let history = try LocalPushTests.History()
        let source = history.source
        let (odd, tree) = try Self.commitFsckRefuses(on: history, message: "odd\n\nReplica: x\n")
        let repository = try Repository.openBare(at: source.path)
        let author = Signature(name: "A", email: "a@a", time: 1000, offsetMinutes: 60)
        let committer = Signature(name: "C", email: "c@c", time: 2000, offsetMinutes: -120)
        let top = try repository.writeCommit(
            tree: tree, parents: [odd], author: author, committer: committer, message: "top\n\nbody\n")
        var messages: [ObjectID: Data] = [:]
        try repository.forEachCommit(reachableFrom: [top]) { commit, _, message in messages[commit] = Data(message) }
        #expect(messages.count == 4)
        for (commit, message) in messages {
            let stored = try source.git("cat-file", "commit", commit.hex).stdout
            let body: Data? = stored.range(of: Data("\n\n".utf8)).map { Data(stored[$0.upperBound...]) }
            #expect(body == message, "\(commit): \(String(decoding: message, as: UTF8.self))")
            let time = try source.git("log", "-1", "--format=%ct", commit.hex).output.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(try repository.committerTime(of: commit) == Int64(time))
        }
    }
}
