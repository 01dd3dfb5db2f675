import CAccessCounter
import Foundation
import TestSupport
import Testing

@testable import TruceGit

/// A push to a bare repository on a local path writes one pack of exactly what it lacks, which git accepts, and then
/// sets and deletes its references; a cancelled one leaves it as it was.
@Suite(.timeLimit(.minutes(10))) struct LocalPushTests {
    typealias Fixture = PackWriterTests.Fixture

    /// A source repository with two commits: the first of `a.txt` and `dir/b.txt`, the second changing only `a.txt`.
    struct History {
        let source: Fixture
        let repository: Repository
        let first: ObjectID, second: ObjectID
        /// The objects only the second commit brings: itself, its root tree and the new `a.txt`.
        let secondBrings: Set<ObjectID>

        init() throws {
            let source = try Fixture()
            let repository = try Repository.openBare(at: source.path)
            let signature = PackWriterTests.signature
            let b = try repository.writeBlob(.text("b\n"))
            let directory = try repository.writeTree([TreeEntry(name: "b.txt", id: b, isTree: false)])
            func commit(_ a: String, parents: [ObjectID]) throws -> (commit: ObjectID, tree: ObjectID, blob: ObjectID) {
                let blob = try repository.writeBlob(.text(a))
                let tree = try repository.writeTree([
                    TreeEntry(name: "a.txt", id: blob, isTree: false), TreeEntry(name: "dir", id: directory, isTree: true),
                ])
                return (try repository.writeCommit(tree: tree, parents: parents, author: signature, committer: signature, message: a), tree, blob)
            }
            let one = try commit("one\n", parents: [])
            let two = try commit("two\n", parents: [one.commit])
            (self.source, self.repository) = (source, repository)
            (first, second, secondBrings) = (one.commit, two.commit, [two.commit, two.tree, two.blob])
        }
    }

    /// The ids the packs of `fixture` list, by pack.
    static func packedIDs(_ fixture: Fixture) throws -> [Set<ObjectID>] {
        try fixture.packs().map { pack in Set(try #require(PackIndex.objectIDs(ofPack: fixture.path + "/objects/pack/" + pack))) }
    }

    @Test func aPushSendsOnlyWhatTheRepositoryLacksAndSetsAndDeletesItsReferences() throws {
        let history = try History()
        let hub = try Fixture()
        let first = try history.repository.pushLocally(
            reachableFrom: [history.first], to: hub.path, setting: [("refs/heads/main", history.first), ("refs/heads/old", history.first)],
            copyingFrom: history.source.path + "/objects")
        #expect(first.objects == 5 && first.bytes > 0, "\(first)")
        // One of the two to delete packed, the other loose: both go.
        _ = try hub.git("pack-refs", "--all")
        _ = try hub.git("update-ref", "refs/heads/loose", history.first.hex)

        var heard: [TransferCounts] = []
        let second = try history.repository.pushLocally(
            reachableFrom: [history.second], to: hub.path,
            setting: [("refs/heads/main", history.second), ("refs/heads/old", nil), ("refs/heads/loose", nil), ("refs/heads/absent", nil)],
            copyingFrom: history.source.path + "/objects", progress: { heard.append($0) })
        // The first commit is there already: the walk stops at it.
        #expect(second.commits == 1 && second.objects == 3)
        #expect(heard.last == TransferCounts(objects: 3, bytes: second.bytes))
        let packs = try Self.packedIDs(hub)
        #expect(packs.count == 2 && packs.contains(history.secondBrings), "\(packs)")
        #expect(try hub.git("for-each-ref", "--format=%(refname) %(objectname)").output == "refs/heads/main \(history.second.hex)\n")
        #expect(try hub.git("rev-list", "refs/heads/main").output == history.second.hex + "\n" + history.first.hex + "\n")
        for pack in try hub.packs() { _ = try hub.git("verify-pack", "objects/pack/" + pack) }
        #expect(try hub.fsckFindings().isEmpty)

        // Nothing lacking: no pack at all, and the reference already where it goes stays.
        let again = try history.repository.pushLocally(
            reachableFrom: [history.second], to: hub.path, setting: [("refs/heads/main", history.second)],
            copyingFrom: history.source.path + "/objects")
        #expect(again == Repository.LocalPushResult())
        #expect(try hub.packs().count == 2)
    }

    /// A reference named in `expecting` moves only from that value: one that moved since fails the push before any
    /// pack is written, and the repository keeps what it had.
    @Test func anExpectedReferenceMovesOnlyFromTheValueExpected() throws {
        let history = try History()
        let hub = try Fixture()
        try history.repository.pushLocally(
            reachableFrom: [history.first], to: hub.path, setting: [("refs/truce/hub", history.first)], copyingFrom: history.source.path + "/objects")
        for expected in [history.second, nil] as [ObjectID?] {
            #expect {
                try history.repository.pushLocally(
                    reachableFrom: [history.second], to: hub.path, setting: [("refs/truce/hub", history.second)],
                    expecting: ["refs/truce/hub": expected], copyingFrom: history.source.path + "/objects")
            } throws: { error in
                (error as? GitError)?.isConcurrentModification == true
            }
        }
        #expect(try hub.packs().count == 1)
        #expect(try hub.git("rev-parse", "refs/truce/hub").output == history.first.hex + "\n")
        try history.repository.pushLocally(
            reachableFrom: [history.second], to: hub.path, setting: [("refs/truce/hub", history.second)],
            expecting: ["refs/truce/hub": history.first], copyingFrom: history.source.path + "/objects")
        #expect(try hub.git("rev-parse", "refs/truce/hub").output == history.second.hex + "\n")
        #expect(try hub.fsckFindings().isEmpty)
    }

    /// One pack per batch of commits, and what one batch's pack holds is not sent again by the next.
    @Test func aPushInBatchesSendsEachObjectOnce() throws {
        let history = try History()
        let hub = try Fixture()
        let result = try history.repository.pushLocally(
            reachableFrom: [history.second], to: hub.path, setting: [("refs/heads/main", history.second)],
            copyingFrom: history.source.path + "/objects", commitsPerPack: 1)
        let packs = try Self.packedIDs(hub)
        // The second commit's five objects (itself, its tree, its a.txt, dir and b.txt), then the first's three.
        #expect(packs.map(\.count).sorted() == [3, 5] && Set(packs.joined()).count == 8, "\(packs)")
        #expect(result.commits == 2 && result.objects == 8)
        #expect(try hub.fsckFindings().isEmpty)
        #expect(try hub.git("rev-list", "--objects", "refs/heads/main").output.split(separator: "\n").count == 8)
    }

    /// A later batch asks the packs the push wrote before only for what the filter of their objects may hold: here the
    /// blob every version shares, once a batch. Each object is still sent once.
    @Test func laterBatchesAskThePushsOwnPacksOnlyForWhatItsFilterMayHold() throws {
        let source = try Fixture()
        let counts = Instrumentation()
        let repository = try Repository.openBare(at: source.path, instrumentation: counts)
        let signature = PackWriterTests.signature
        let shared = try repository.writeBlob(.text("every version holds this\n"))
        var tip: ObjectID?
        for index in 0..<60 {
            let own = try repository.writeBlob(.text("version \(index)\n"))
            let tree = try repository.writeTree([
                TreeEntry(name: "common.txt", id: shared, isTree: false), TreeEntry(name: "own.txt", id: own, isTree: false),
            ])
            tip = try repository.writeCommit(
                tree: tree, parents: tip.map { [$0] } ?? [], author: signature, committer: signature, message: "\(index)")
        }
        let hub = try Fixture()
        let result = try repository.pushLocally(
            reachableFrom: [try #require(tip)], to: hub.path, setting: [("refs/heads/main", try #require(tip))],
            copyingFrom: source.path + "/objects", commitsPerPack: 10)
        let packs = try Self.packedIDs(hub)
        #expect(packs.count == 6 && packs.map(\.count).reduce(0, +) == 181 && Set(packs.joined()).count == 181, "\(packs.map(\.count))")
        #expect(result.objects == 181)
        #expect(counts.looksInWrittenPacks == 5, "the shared blob, once in each batch after the first")
        #expect(try hub.fsckFindings().isEmpty)
    }

    /// What the repository holds is asked of its packs and of one listing of its loose objects, not with a look for a
    /// loose file per object: a first push lacks every object, and those looks were a tenth of its time.
    @Test func aPushLooksForNoLooseFilePerObject() throws {
        let source = try Fixture()
        let repository = try Repository.openBare(at: source.path)
        var tip: ObjectID?
        for index in 0..<50 {
            let blob = try repository.writeBlob(.text("version \(index)\n"))
            let tree = try repository.writeTree([TreeEntry(name: "a.txt", id: blob, isTree: false)])
            let signature = PackWriterTests.signature
            tip = try repository.writeCommit(
                tree: tree, parents: tip.map { [$0] } ?? [], author: signature, committer: signature, message: "\(index)")
        }
        let hub = try Fixture()
        // A look for objects/info/alternates and for each pack's .keep is the same for any number of objects.
        truce_access_watch(hub.path + "/objects/")
        let result = try repository.pushLocally(
            reachableFrom: [try #require(tip)], to: hub.path, setting: [("refs/heads/main", try #require(tip))],
            copyingFrom: source.path + "/objects")
        let looks = truce_access_watched_count()
        #expect(result.objects == 150)
        if truce_access_interposed() == 1 { #expect(looks <= 2, "\(looks) looks for a file under the hub's objects for 150 objects") }
        #expect(try hub.fsckFindings().isEmpty)
    }

    /// The ids of the objects in the packs of `fixture`, in the order each pack holds them (by offset, as
    /// `git verify-pack -v` gives them).
    static func packOrder(_ fixture: Fixture) throws -> [String] {
        try fixture.packs().flatMap { pack in
            try fixture.git("verify-pack", "-v", "objects/pack/" + pack).output.split(separator: "\n").compactMap { line -> (Int, String)? in
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                guard fields.count >= 5, fields[0].count == 40, let offset = Int(fields[4]) else { return nil }
                return (offset, String(fields[0]))
            }.sorted { $0.0 < $1.0 }.map(\.1)
        }
    }

    /// A push reads the commits and trees it sends from the store's packs in whatever order its walk takes, and
    /// copies them in the order those packs hold them: at random, each copy faulted pages of the packs in again.
    @Test func aPushCopiesObjectsInTheOrderItsPacksHoldThem() throws {
        let source = try Fixture()
        let repository = try Repository.openBare(at: source.path)
        let signature = PackWriterTests.signature
        var tips: [ObjectID] = []
        for index in 0..<40 {
            let blob = try repository.writeBlob(.text("document \(index)\n"))
            let folder = try repository.writeTree([TreeEntry(name: "doc\(index).txt", id: blob, isTree: false)])
            let tree = try repository.writeTree([TreeEntry(name: "d\(index)", id: folder, isTree: true)])
            tips.append(try repository.writeCommit(tree: tree, parents: [], author: signature, committer: signature, message: "\(index)"))
        }
        for (index, tip) in tips.enumerated() { _ = try source.git("update-ref", "refs/heads/\(index)", tip.hex) }
        // git packs the commits first, then the trees, then the blobs: not the order of the walk from the tips.
        _ = try source.git("repack", "-a", "-d", "-q", "--window=0")
        let hub = try Fixture()
        let result = try repository.pushLocally(
            reachableFrom: tips.shuffled(), to: hub.path, setting: tips.enumerated().map { ("refs/heads/\($0.offset)", $0.element) },
            copyingFrom: source.path + "/objects")
        #expect(result.objects == 160)
        let sourceOrder = try Self.packOrder(source), pushed = try Self.packOrder(hub)
        #expect(pushed.count == 160 && Set(pushed) == Set(sourceOrder))
        #expect(pushed == sourceOrder.filter(Set(pushed).contains))
        #expect(try hub.fsckFindings().isEmpty)
    }

    /// A push whose walk reads each generation on two threads sends exactly what one read on one thread sends: the
    /// objects two documents share once, a commit two lines of history reach once (and counted once), and what the
    /// second thread cannot read from the packs (loose objects) read on the first.
    @Test func aPushReadOnTwoThreadsSendsWhatOneThreadSends() throws {
        let source = try Fixture()
        let signature = PackWriterTests.signature
        func history(_ repository: Repository, packingAfter packed: Int) throws -> [ObjectID] {
            var tips: [ObjectID] = []
            let shared = try repository.writeBlob(.text("the same in every third document\n"))
            for index in 0..<80 {
                let blob = index % 3 == 0 ? shared : try repository.writeBlob(.text("document \(index)\n"))
                let folder = try repository.writeTree([TreeEntry(name: "doc.txt", id: blob, isTree: false)])
                let tree = try repository.writeTree([TreeEntry(name: "d\(index % 7)", id: folder, isTree: true)])
                var tip = try repository.writeCommit(tree: tree, parents: [], author: signature, committer: signature, message: "v \(index)")
                if index % 4 == 0 {
                    tip = try repository.writeCommit(tree: tree, parents: [tip], author: signature, committer: signature, message: "v again")
                }
                // Every tenth document joins the line of the one before: a commit both reach.
                if index % 10 == 9, let before = tips.last {
                    tip = try repository.writeCommit(tree: tree, parents: [tip, before], author: signature, committer: signature, message: "v merge")
                }
                tips.append(tip)
                if index == packed {
                    // Every object so far, as whole objects (a store's packs hold no delta; one is read through libgit2).
                    let all = try source.git("cat-file", "--batch-all-objects", "--batch-check=%(objectname)").output
                    #expect(try git(["-C", source.path, "pack-objects", "-q", "--window=0", "objects/pack/pack"], input: Data(all.utf8)).status == 0)
                    _ = try source.git("prune-packed")
                }
            }
            let empty = try repository.writeTree([])
            return [try repository.writeCommit(tree: empty, parents: tips, author: signature, committer: signature, message: "part")]
        }
        let tips = try history(try Repository.openBare(at: source.path), packingAfter: 59)
        func push(dividing: Bool, commitsPerPack: Int = 1 << 17) throws -> (result: Repository.LocalPushResult, hub: Fixture, secondThreadReads: Int)
        {
            let instrumentation = Instrumentation(fewestDividedOnTwoThreads: dividing ? 2 : 4096)
            let repository = try Repository.openBare(at: source.path, instrumentation: instrumentation)
            let hub = try Fixture()
            let result = try repository.pushLocally(
                reachableFrom: tips, to: hub.path, setting: [("refs/heads/main", tips[0])], copyingFrom: source.path + "/objects",
                commitsPerPack: commitsPerPack, counting: { $0.first == UInt8(ascii: "v") })
            return (result, hub, instrumentation.objectsReadOnASecondThread)
        }
        let one = try push(dividing: false)
        #expect(one.secondThreadReads == 0)
        let reachable = try source.git("rev-list", "--objects", tips[0].hex).output.split(separator: "\n").map { $0.prefix(40) }
        #expect(one.result.objects == reachable.count && one.result.counted == 80 + 20 + 8)
        #expect(try one.result.commits == Int(source.git("rev-list", "--count", tips[0].hex).output.dropLast()))
        // Divided; and divided with generations read 16 at a time (a push's batch), in several packs.
        for two in [try push(dividing: true), try push(dividing: true, commitsPerPack: 16)] {
            if ProcessInfo.processInfo.activeProcessorCount > 1 { #expect(two.secondThreadReads > 0) }
            #expect(try source.packs().count == 1 && two.result.objects == one.result.objects && two.result.counted == one.result.counted)
            #expect(two.result.commits == one.result.commits)
            #expect(try Set(Self.packedIDs(two.hub).flatMap { $0 }) == Set(Self.packedIDs(one.hub).flatMap { $0 }))
            #expect(try two.hub.fsckFindings().isEmpty)
        }
        // Batches written out of the repository's sight (an encrypted hub's cache): the walk remembers what they held,
        // and a commit that a later generation reaches again is not sent again.
        let aside = TemporaryDirectory("truce-push-aside")
        let hub = try Fixture()
        let outOfSight = try Repository.openBare(at: source.path).pushLocally(
            reachableFrom: tips, to: hub.path, setting: [], copyingFrom: source.path + "/objects", packDirectory: aside.path + "/", commitsPerPack: 16
        )
        #expect(try outOfSight.commits == one.result.commits && outOfSight.packs.count > 1 && hub.packs().isEmpty)
    }

    /// Objects the repository holds as loose files (as git's receive-pack leaves a small push) are not sent again.
    @Test func objectsTheRepositoryHoldsLooseAreNotSentAgain() throws {
        let history = try History()
        let hub = try Fixture()
        try history.repository.pushLocally(
            reachableFrom: [history.first], to: hub.path, setting: [("refs/heads/main", history.first)], copyingFrom: history.source.path + "/objects"
        )
        // The first push's pack, unpacked into loose files.
        let pack = try #require(try hub.packs().first)
        let moved = hub.path + "/" + pack
        try FileManager.default.moveItem(atPath: hub.path + "/objects/pack/" + pack, toPath: moved)
        try FileManager.default.removeItem(atPath: hub.path + "/objects/pack/" + pack.replacingOccurrences(of: ".pack", with: ".idx"))
        let unpacked = try git(["-C", hub.path, "unpack-objects", "-q"], input: Data(contentsOf: URL(fileURLWithPath: moved)))
        try #require(unpacked.status == 0, "\(unpacked.errorOutput)")
        try FileManager.default.removeItem(atPath: moved)
        #expect(try hub.packs().isEmpty)

        let second = try history.repository.pushLocally(
            reachableFrom: [history.second], to: hub.path, setting: [("refs/heads/main", history.second)],
            copyingFrom: history.source.path + "/objects")
        #expect(second.commits == 1 && second.objects == 3, "\(second)")
        #expect(try Self.packedIDs(hub) == [history.secondBrings])
        #expect(try hub.git("rev-list", "--objects", "refs/heads/main").output.split(separator: "\n").count == 8)
        #expect(try hub.fsckFindings().isEmpty)
    }

    @Test func aCancelledPushLeavesTheRepositoryAsItWas() throws {
        let history = try History()
        let hub = try Fixture()
        try history.repository.pushLocally(
            reachableFrom: [history.first], to: hub.path, setting: [("refs/heads/main", history.first)], copyingFrom: history.source.path + "/objects"
        )
        let files = try FileManager.default.subpathsOfDirectory(atPath: hub.path).sorted()
        let cancellation = Cancellation()
        cancellation.cancel()
        #expect {
            try history.repository.pushLocally(
                reachableFrom: [history.second], to: hub.path, setting: [("refs/heads/main", history.second)],
                copyingFrom: history.source.path + "/objects", cancellation: cancellation)
        } throws: { error in
            (error as? GitError)?.code == -7  // GIT_EUSER, as a cancelled libgit2 push fails
        }
        #expect(try FileManager.default.subpathsOfDirectory(atPath: hub.path).sorted() == files)
        #expect(try hub.git("rev-parse", "refs/heads/main").output == history.first.hex + "\n")
    }
}
