import Foundation
import TestSupport
import Testing

@testable import TruceGit

/// A quarantine reading another store on a local path in place: what its checks read there is proven once, and its
/// copy into the store takes those proofs.
@Suite(.timeLimit(.minutes(10))) struct QuarantineTests {
    typealias Fixture = PackWriterTests.Fixture

    /// The checks' reads of a commit and its tree prove them once each; the copy then proves only the blobs it had not
    /// read, and the store holds every object, as git fsck finds.
    @Test func whatTheChecksReadInABorrowedStoreIsCopiedWithoutASecondProof() throws {
        let hub = try Fixture(), store = try Fixture()
        let bulk = try MemoryRepository(path: hub.path)
        let (blobs, tree, commit) = try PackWriterTests.recordCommit(of: ["a": .text("one\n"), "b": .text("two\n")], in: bulk)
        _ = try bulk.flush()
        _ = try hub.git("update-ref", "refs/heads/main", commit.hex)

        let quarantine = try Quarantine(of: try Repository.openBare(at: store.path))
        let references = try quarantine.borrowObjects(of: hub.path, refsMatching: "refs/heads/*")
        #expect(references.map(\.target) == [commit])
        let reads = try #require(quarantine.repository.directPackReads)
        #expect(try quarantine.repository.rawCommitIfPresent(commit) != nil)
        #expect(try quarantine.repository.rawTreeIfPresent(tree) != nil)
        #expect(reads.proofs == 2)

        try quarantine.admit([commit], hiding: [], whenOnly: CheckedObjects([commit, tree] + blobs.values.sorted()))
        #expect(reads.proofs == 2 + blobs.count, "the copy proved the commit or its tree again, or copied without the reads")
        #expect(try store.fsckFindings().isEmpty)
        for id in [commit, tree] + blobs.values {
            #expect(try TestSupport.git(["-C", store.path, "cat-file", "-e", id.hex]).status == 0, "\(id) is not in the store")
        }
    }

    /// A commit an outgoing quarantine writes from its bytes goes to its in-memory store without libgit2 looking for it
    /// in the store's packs first, which mapped a million documents' pack indexes a second time. The look shows here as
    /// libgit2's "freshen" of the pack that holds the commit already: it sets the pack's time to now, and the write
    /// leaves it alone. The commit is git's hash of its bytes, reads back, and enters the store whole; so does the empty
    /// tree a manifest is written with (put back through the object database: the pack is freshened, and it fails).
    @Test func anOutgoingQuarantineWritesACommitToItsMemoryWithoutLookingInTheStore() throws {
        let store = try Fixture()
        let signature = PackWriterTests.signature
        let bulk = try MemoryRepository(path: store.path)
        let (_, _, head) = try PackWriterTests.recordCommit(of: ["a": .text("one\n")], in: bulk)
        let part = { (message: String) in (tree: ObjectID.emptyTree, parents: [head], message: message) }
        let held = part("a part the store holds\n"), new = part("a new part\n")
        _ = try bulk.writeCommit(tree: held.tree, parents: held.parents, author: signature, committer: signature, message: held.message)
        bulk.record(try bulk.repository.writeTree([]))
        _ = try bulk.flush()
        let pack = store.path + "/objects/pack/" + (try #require(try store.packs().first))
        let dayAgo = Date().addingTimeInterval(-86_400)
        try FileManager.default.setAttributes([.modificationDate: dayAgo], ofItemAtPath: pack)

        let scratch = try Quarantine(of: try Repository.openBare(at: store.path), outgoing: true)
        var written: [ObjectID] = []
        for commit in [held, new, new] {
            written.append(
                try scratch.repository.writeCommit(
                    tree: commit.tree, knownParents: commit.parents, author: signature, committer: signature, message: commit.message))
        }
        // Its manifest's empty tree too, which the store holds.
        #expect(try scratch.repository.writeEmptyTree() == ObjectID.emptyTree)
        let touched = try #require(try FileManager.default.attributesOfItem(atPath: pack)[.modificationDate] as? Date)
        #expect(abs(touched.timeIntervalSince(dayAgo)) < 1, "libgit2 looked in the store's pack (and freshened it)")
        #expect(written[1] == written[2])
        let expected = try ObjectBytes.commit(tree: new.tree, parents: new.parents, author: signature, committer: signature, message: new.message)
        #expect(written[1].hex + "\n" == (try TestSupport.git(["hash-object", "-t", "commit", "--stdin"], input: Data(expected))).output)
        #expect(try scratch.repository.readCommit(written[1]).parents == [head])
        try scratch.packIntoStore(Array(written.prefix(2)) + [ObjectID.emptyTree])
        #expect(try store.git("cat-file", "-t", written[1].hex).output == "commit\n")
        #expect(try store.fsckFindings().isEmpty)
    }

    /// A small blob the checks ask about (is it a blob?) is proven then, on whichever thread checks it, and the copy
    /// takes it as proven; a large one is only looked at, and the copy proves it.
    @Test func aSmallBlobTheChecksAskAboutIsCopiedWithoutASecondProof() throws {
        let hub = try Fixture(), store = try Fixture()
        let bulk = try MemoryRepository(path: hub.path)
        let (blobs, tree, commit) = try PackWriterTests.recordCommit(
            of: ["small": .text("one\n"), "large": Data(repeating: 0x61, count: 8192)], in: bulk)
        _ = try bulk.flush()
        _ = try hub.git("update-ref", "refs/heads/main", commit.hex)

        let quarantine = try Quarantine(of: try Repository.openBare(at: store.path))
        _ = try quarantine.borrowObjects(of: hub.path, refsMatching: "refs/heads/*")
        let reads = try #require(quarantine.repository.directPackReads)
        let (small, large) = (try #require(blobs["small"]), try #require(blobs["large"]))
        #expect(try quarantine.repository.containsBlob(small) && quarantine.repository.containsBlob(large))
        #expect(reads.proofs == 1, "the small blob, and only it, is proven when asked about")

        try quarantine.admit([commit], hiding: [], whenOnly: CheckedObjects([commit, tree, small, large]))
        #expect(reads.proofs == 1 + 3, "the copy proved the small blob again, or not the commit, the tree and the large blob")
        #expect(try store.fsckFindings().isEmpty)
    }

    /// What the checks ask of a borrowed store's objects besides their bytes (is this a blob, a commit; the commit as
    /// parsed) is answered from its packs read in place, not through libgit2, which would map every pack and index
    /// there a second time; an object the packs lack still goes to libgit2.
    @Test func aBorrowedStoresObjectsAreLookedUpInItsPacksInPlace() throws {
        let hub = try Fixture(), store = try Fixture()
        let bulk = try MemoryRepository(path: hub.path)
        let (blobs, tree, commit) = try PackWriterTests.recordCommit(of: ["a": .text("one\n")], in: bulk)
        _ = try bulk.flush()
        _ = try hub.git("update-ref", "refs/heads/main", commit.hex)
        let quarantine = try Quarantine(of: try Repository.openBare(at: store.path))
        _ = try quarantine.borrowObjects(of: hub.path, refsMatching: "refs/heads/*")
        let repository = quarantine.repository
        repository.keptCommits = nil
        let blob = try #require(blobs["a"])
        let before = repository.instrumentation.readsThroughLibgit2

        #expect(try repository.containsBlob(blob))
        #expect(try !repository.containsBlob(tree))
        #expect(try repository.containsCommit(commit))
        #expect(try !repository.containsCommit(blob))
        #expect(try repository.readCommit(commit).tree == tree)
        #expect(repository.instrumentation.readsThroughLibgit2 == before, "a lookup went through libgit2")

        let elsewhere = ObjectID(hex: String(repeating: "ab", count: 20))!
        #expect(try !repository.containsBlob(elsewhere))
        #expect(repository.instrumentation.readsThroughLibgit2 == before + 1)
    }

    /// What a copy leaves out because the store has it: a store's few objects are read from their indexes into a set,
    /// many are looked up in the packs instead; either way an object the store holds is not copied again.
    @Test func aStoresFewObjectsAreKnownFromTheirIndexesAndManyAreLookedUp() throws {
        let store = try Fixture()
        let packs = store.path + "/objects/pack/"
        #expect(Quarantine.fewObjects(in: []) == [])
        let few = try MemoryRepository(path: store.path)
        let (blobs, tree, commit) = try PackWriterTests.recordCommit(of: ["a": .text("one\n")], in: few)
        _ = try few.flush()
        let smallIndex = try #require(try FileManager.default.contentsOfDirectory(atPath: packs).first { $0.hasSuffix(".idx") })
        #expect(Quarantine.fewObjects(in: [packs + smallIndex]) == Set([commit, tree] + blobs.values))
        let many = try MemoryRepository(path: store.path)
        _ = try PackWriterTests.recordCommit(of: Dictionary(uniqueKeysWithValues: (0..<5000).map { ("f\($0)", Data.text("\($0)\n")) }), in: many)
        _ = try many.flush()
        let indexes = try FileManager.default.contentsOfDirectory(atPath: packs).filter { $0.hasSuffix(".idx") }.map { packs + $0 }
        #expect(indexes.count == 2)
        #expect(Quarantine.fewObjects(in: indexes) == nil, "5,000 objects are looked up, not read into a set")
    }

    /// Commits read ahead of a walk (a sync's listing) from a borrowed store's packs, on one thread or two, are kept as
    /// the walk's own reads would keep them, each byte for byte what git holds, while there is room, and then read by
    /// the walk without a second proof; those the caller picks come back whole, and one no pack holds (loose there)
    /// comes back as not read, for the walk to read.
    @Test(arguments: [false, true]) func commitsReadAheadAreKeptForTheWalkWhileThereIsRoom(onTwoThreads: Bool) throws {
        let hub = try Fixture(), store = try Fixture()
        let hubRepository = try Repository.openBare(at: hub.path)
        let tree = try hubRepository.writeTree([])
        var commits: [ObjectID] = []
        for index in 0..<40 {
            let signature = Signature(name: "Ada", email: "ada@example.com", time: Int64(1_700_000_000 + index), offsetMinutes: 0)
            // Messages of one length: each costs as much to keep.
            commits.append(
                try hubRepository.writeCommit(tree: tree, parents: [], author: signature, committer: signature, message: "\(index + 10)\n"))
        }
        try PackWriter(repository: hubRepository).write(commits.dropLast())
        for id in commits.dropLast() {
            try FileManager.default.removeItem(atPath: hub.path + "/objects/" + id.hex.prefix(2) + "/" + id.hex.dropFirst(2))
        }

        let instrumentation = Instrumentation(fewestDividedOnTwoThreads: onTwoThreads ? 2 : 4096)
        let quarantine = try Quarantine(of: try Repository.openBare(at: store.path, instrumentation: instrumentation))
        _ = try quarantine.borrowObjects(of: hub.path, refsMatching: "refs/heads/*")
        let repository = quarantine.repository
        let reads = try #require(repository.directPackReads)
        // Room for 30 of them.
        repository.keptCommits = [:]
        repository.keptCommitLimit = 30 * Repository.keptCommitCost(of: Array(try hub.git("cat-file", "commit", commits[0].hex).stdout))
        let proofsBefore = reads.proofs

        // Picked: the one whose message is "12".
        let ahead = try #require(repository.readCommitsAhead(commits) { raw in raw.suffix(4).elementsEqual("\n12\n".utf8) })
        // A second thread's reader is made only for a run it reads: making one halves what the readers keep mapped.
        let divided = onTwoThreads && ProcessInfo.processInfo.activeProcessorCount > 1
        #expect((reads.residentShare < PackEntries.residentBudget) == divided)
        let second = try #require(repository.directPackReadsForAnotherThread())
        var proofs: Int { reads.proofs + second.proofs }
        #expect(ahead.unread == [commits.last!], "not read: \(ahead.unread)")
        #expect(ahead.selected == [commits[2]: Array(try hub.git("cat-file", "commit", commits[2].hex).stdout)])
        let kept = commits.filter { repository.keptCommits?[$0] != nil }
        #expect(kept.count == 30, "\(kept.count) kept")
        #expect(!kept.contains(commits.last!), "the loose commit was kept")
        for id in kept {
            #expect(repository.keptCommits?[id]?.raw == Array(try hub.git("cat-file", "commit", id.hex).stdout), "\(id) kept otherwise")
            #expect(repository.keptCommits?[id]?.record?.id == id && repository.keptCommits?[id]?.record?.parents == [])
        }
        #expect((instrumentation.objectsReadOnASecondThread > 0) == divided)
        let proofsAhead = proofs - proofsBefore
        #expect(proofsAhead >= 30 && proofsAhead <= 39)
        for id in kept { _ = try #require(try repository.rawCommitIfPresentKeepingWhileRoom(id)) }
        #expect(proofs - proofsBefore == proofsAhead, "the walk proved again what was read ahead")
        #expect(
            try repository.rawCommitIfPresentKeepingWhileRoom(commits.last!) == Array(try hub.git("cat-file", "commit", commits.last!.hex).stdout))
    }

    /// The checks' second handle takes what the first kept of its half's commits: moved, not copied, read there without
    /// a proof, and forgotten with what it added to its limit once that half is checked.
    @Test func aSecondHandleTakesTheCommitsTheFirstKeptForItsHalf() throws {
        let hub = try Fixture(), store = try Fixture()
        let hubRepository = try Repository.openBare(at: hub.path)
        let tree = try hubRepository.writeTree([])
        let commits = try (0..<8).map { index in
            let signature = Signature(name: "Ada", email: "ada@example.com", time: Int64(1_700_000_000 + index), offsetMinutes: 0)
            return try hubRepository.writeCommit(tree: tree, parents: [], author: signature, committer: signature, message: "\(index)\n")
        }
        try PackWriter(repository: hubRepository).write(commits)
        let quarantine = try Quarantine(of: try Repository.openBare(at: store.path))
        _ = try quarantine.borrowObjects(of: hub.path, refsMatching: "refs/heads/*")
        let first = quarantine.repository
        _ = first.readCommitsAhead(commits) { _ in false }
        #expect(commits.allSatisfy { first.keptCommits?[$0] != nil })

        let second = try quarantine.secondReader()
        let limit = second.keptCommitLimit
        let (mine, theirs) = (commits.prefix(4), commits.suffix(4))
        second.takeKeptCommits(of: theirs, from: first)
        #expect(mine.allSatisfy { first.keptCommits?[$0] != nil } && theirs.allSatisfy { first.keptCommits?[$0] == nil })
        let reads = try #require(second.directPackReads)
        let proofs = reads.proofs
        for id in theirs {
            #expect(try second.rawCommitIfPresent(id) == Array(try hub.git("cat-file", "commit", id.hex).stdout))
        }
        #expect(reads.proofs == proofs, "the second handle read again what it took")
        #expect(second.keptCommitLimit > limit)
        second.forgetKeptCommits()
        #expect(second.keptCommits?.isEmpty == true && second.keptCommitLimit == limit)
    }
}
