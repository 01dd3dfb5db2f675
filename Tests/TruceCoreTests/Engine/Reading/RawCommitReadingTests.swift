import Foundation
import TestSupport
import Testing

@testable import TruceCore
@testable import TruceGit

/// The checks of a download read each commit once, raw, and take what it records from those bytes: that reading
/// must be libgit2's, field by field, for every commit git's checks let through, and refuse the others.
@Suite(.timeLimit(.minutes(10))) struct RawCommitReadingTests {
    static let tree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

    /// Commits `git fsck` takes, written byte for byte, with what libgit2 makes of odd names, zones and messages.
    static let accepted: [String] = [
        "tree \(tree)\nauthor laptop <laptop@truce> 1764582000 +0000\ncommitter laptop <laptop@truce> 1764582000 +0000\n\nsave notes/a.md\n",
        "tree \(tree)\nparent \(tree)\nparent 0123456789abcdef0123456789abcdef01234567\nauthor Ada  Lovelace <ada@example.org> 1 -0130\ncommitter truce <> 0 +1400\n\nmessage\n",
        "tree \(tree)\nauthor caf\u{E9} \u{1F600} <x@y> 1764582000 +0530\ncommitter c <c> 9999999999 -1200\nencoding ISO-8859-1\n\n\n\nleading blank lines\n",
        "tree \(tree)\nauthor zone <z> 5 +1599\ncommitter zone <z> 5 +9960\n\nzones libgit2 reads as UTC\n",
        "tree \(tree)\nauthor a <a> 5 +0000\ncommitter b <b> 6 +0000\ngpgsig -----BEGIN PGP SIGNATURE-----\n line\n -----END PGP SIGNATURE-----\n\nsigned\n",
        "tree \(tree)\nauthor a <a> 5 +0000\ncommitter b <b> 6 +0000\n\n",
        "tree \(tree)\nauthor a <a> 5 +0000\ncommitter b <b> 6 +0000\n\nbefore a NUL\u{0}after it\n",
        "tree \(tree)\nauthor a\tb <a> 5 +0000\ncommitter b <b> 6 +0000\n\ntab in a name\n",
        "tree \(tree)\nauthor \t spaced  name \u{0B} <  e@x \t > 9223372036854775807 -0000\ncommitter b <b> 6 +0000\n\n\n",
        "tree \(tree)\nauthor a <a> 5 -1459\ncommitter b <b> 6 +1500\n\nauthor c <c> 7 +0000\nin the message, not the header\n",
    ]

    /// Commits `commitHeaderProblem` refuses: the raw reading must not make anything of them.
    static let refused: [String] =
        [
            "tree \(tree)\nauthor a <a> 5 +0000\n\nno committer\n",
            "tree \(tree)\nauthor a <a> 05 +0000\ncommitter b <b> 6 +0000\n\nzero-padded date\n",
            "tree \(tree)\nauthor a<a> 5 +0000\ncommitter b <b> 6 +0000\n\nno space before the email\n",
            "parent \(tree)\ntree \(tree)\nauthor a <a> 5 +0000\ncommitter b <b> 6 +0000\n\nparent first\n",
            "tree \(tree)\nauthor a <a> 5 +0000\nauthor b <b> 6 +0000\ncommitter b <b> 6 +0000\n\ntwo authors\n",
        ] + refusedBeyondGit

    /// Commits git 2.39's fsck takes (it reads no header past the committer) and Truce refuses: a second author or
    /// committer line that one reader could take and another skip, so that replicas would disagree on a version's date.
    static let refusedBeyondGit: [String] = [
        "tree \(tree)\nauthor a <a> 5 +0000\ncommitter b <b> 6 +0000\nauthor b <b> 6 +0000\n\nan author after the committer\n",
        "tree \(tree)\nauthor a <a> 5 +0000\ncommitter b <b> 6 +0000\ncommitter c <c> 7 +0000\n\ntwo committers\n",
    ]

    @Test func theRawReadingOfACleanCommitIsLibgit2s() throws {
        let test = try TestStore()
        try test.store.withEngine { engine in
            let repository = engine.repository
            for text in Self.accepted {
                let raw = Array(text.utf8)
                #expect(commitHeaderProblem(raw) == nil, "git fsck takes this commit: \(text)")
                let hashed = try git(["--git-dir", test.path, "hash-object", "-w", "-t", "commit", "--literally", "--stdin"], input: Data(raw))
                let id = try #require(ObjectID(hex: String(hashed.output.prefix(40))), "\(hashed.errorOutput)")
                let theirs = try repository.readCommit(id)
                let ours = try #require(CommitRecord(id: id, fsckCleanRaw: raw), "the raw reading refused \(text)")
                #expect(ours.tree == theirs.tree && ours.parents == theirs.parents, "\(text)")
                #expect(ours.author == theirs.author, "\(text)")
                #expect(ours.committer == theirs.committer, "\(text)")
                #expect(Array(ours.message.utf8) == Array(theirs.message.utf8), "\(text)")
            }
        }
    }

    /// git is the oracle for the rule table: every commit `commitHeaderProblem` refuses, `git fsck --strict` refuses too,
    /// except the ones listed as Truce's own stricter rule, which git takes.
    @Test func gitFsckRefusesEveryCommitTheChecksRefuseButTheStricterOnes() throws {
        let directory = TemporaryDirectory("truce-fsck-rules")
        #expect(try git(["init", "-q", "--bare", directory.file("repo.git")]).status == 0)
        for text in Self.refused {
            let hashed = try git(
                ["--git-dir", directory.file("repo.git"), "hash-object", "-w", "-t", "commit", "--literally", "--stdin"], input: .text(text))
            let id = hashed.output.trimmingCharacters(in: .whitespacesAndNewlines)
            let fsck = try git(["--git-dir", directory.file("repo.git"), "fsck", "--strict", "--no-dangling"])
            if Self.refusedBeyondGit.contains(text) {
                #expect(fsck.status == 0, "git fsck --strict refuses this commit too (move it to the shared rows): \(text)")
            } else {
                #expect(fsck.status != 0 && fsck.errorOutput.contains(id), "git fsck --strict takes this commit: \(text)")
            }
            // One bad commit at a time: the next row is judged on its own.
            try FileManager.default.removeItem(atPath: directory.file("repo.git/objects/\(id.prefix(2))/\(id.dropFirst(2))"))
        }
    }

    @Test func aCommitGitsChecksRefuseHasNoRawReading() {
        for text in Self.refused {
            #expect(commitHeaderProblem(Array(text.utf8)) != nil, "git fsck refuses this commit: \(text)")
            #expect(CommitRecord(id: ObjectID.emptyTree, fsckCleanRaw: Array(text.utf8)) == nil, "\(text)")
        }
    }
}

/// The commits a quarantine keeps for its checks stay within their limit, which starts over when full and so keeps the
/// latest reads; a commit no longer kept is read again, the same.
@Suite(.timeLimit(.minutes(10))) struct KeptCommitLimitTests {
    /// A store of 40 commits, whose repository keeps commits within 2,000 bytes; `body` gets the commits too.
    private func withFortyCommitsKeptWithinALimit(
        _ body: (_ test: TestStore, _ repository: Repository, _ ids: [VersionID]) throws -> Void
    ) throws {
        let test = try TestStore()
        let ids = try test.store.saveBatch(
            (0..<40).map { BatchSave(key: DocumentKey(stringLiteral: "k/\($0).md"), content: .text("\($0)\n"), device: "laptop") })
        try test.store.withEngine { engine in
            engine.repository.keptCommits = [:]
            engine.repository.keptCommitLimit = 2000
            try body(test, engine.repository, ids)
        }
    }

    @Test func aFullCacheStartsOverAndKeepsTheLatestReads() throws {
        try withFortyCommitsKeptWithinALimit { test, repository, ids in
            var costs: [Int] = []
            for id in ids { costs.append(Repository.keptCommitCost(of: try #require(try repository.rawCommit(id.objectID)))) }
            let kept = try #require(repository.keptCommits)
            #expect(repository.keptCommitBytes <= 2000)
            // The reads since the cache last started over: the newest that fit in one limit, counted the way it fills.
            var generation: [Int] = [], used = 0
            for (index, cost) in costs.enumerated() {
                if used + cost > 2000 { (generation, used) = ([], 0) }
                generation.append(index)
                used += cost
            }
            #expect(Set(kept.keys) == Set(generation.map { ids[$0].objectID }))
            #expect(kept.count > 0 && kept.count < ids.count, "the limit kept \(kept.count) of \(ids.count)")
            #expect(kept[ids.last!.objectID] != nil, "the latest read is kept")
            // Kept or not, a commit reads the same.
            for id in ids {
                #expect(try repository.readCommit(id.objectID).message == Repository.openBare(at: test.path).readCommit(id.objectID).message)
            }
        }
    }

    /// A commit forgotten once its check is over gives its room back: the cache then keeps as many later reads as it
    /// kept at first, and a commit forgotten reads the same again.
    @Test func aForgottenCommitGivesItsRoomBack() throws {
        try withFortyCommitsKeptWithinALimit { test, repository, ids in
            for id in ids.map(\.objectID) { _ = try repository.rawCommitIfPresentKeepingWhileRoom(id) }
            let keptAtFirst = repository.keptCommits?.count ?? 0
            #expect(keptAtFirst > 0 && keptAtFirst < ids.count && repository.keptCommits?[ids.last!.objectID] == nil)
            for id in ids.map(\.objectID) { repository.forgetKeptCommit(id) }
            #expect(repository.keptCommits?.isEmpty == true && repository.keptCommitBytes == 0)
            // Room for as many again: the later commits (of the same sizes, give or take a digit) are kept now.
            for id in ids.reversed().map(\.objectID) { _ = try repository.rawCommitIfPresentKeepingWhileRoom(id) }
            #expect(repository.keptCommits?[ids.last!.objectID] != nil)
            #expect(abs((repository.keptCommits?.count ?? 0) - keptAtFirst) <= 1)
            #expect(try repository.readCommit(ids[0].objectID).message == Repository.openBare(at: test.path).readCommit(ids[0].objectID).message)
        }
    }

    /// A listing reads every head long before its checks read it again, in the same order: its reads keep the first
    /// commits that fit and never start the cache over, so those are what the checks find kept.
    @Test func aReadThatKeepsWhileThereIsRoomKeepsTheFirstReadsAndNeverStartsOver() throws {
        try withFortyCommitsKeptWithinALimit { test, repository, ids in
            // Each read is kept when it fits beside those kept before it: none starts the cache over.
            var first: [ObjectID] = [], used = 0
            for id in ids.map(\.objectID) {
                let raw = try #require(try repository.rawCommitIfPresentKeepingWhileRoom(id))
                #expect(raw == (try Repository.openBare(at: test.path).rawCommit(id)), "the bytes as stored")
                let cost = Repository.keptCommitCost(of: raw)
                if used + cost <= 2000 { (first, used) = (first + [id], used + cost) }
            }
            let kept = try #require(repository.keptCommits)
            #expect(Set(kept.keys) == Set(first))
            #expect(kept[ids[0].objectID] != nil && kept[ids.last!.objectID] == nil, "the first read is kept, the last is not")
            #expect(first.count < ids.count, "the limit kept \(first.count) of \(ids.count)")
            // Not a commit, or not there: nil, and nothing kept.
            let tree = try repository.readCommit(ids[0].objectID).tree
            #expect(try repository.rawCommitIfPresentKeepingWhileRoom(tree) == nil)
            #expect(try repository.rawCommitIfPresentKeepingWhileRoom(ObjectID(hex: String(repeating: "1", count: 40))!) == nil)
            #expect(repository.keptCommits?.count == first.count)
        }
    }
}
