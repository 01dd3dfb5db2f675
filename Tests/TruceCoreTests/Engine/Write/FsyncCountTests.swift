import CFsyncCounter
import Foundation
import TestSupport
import Testing
import TruceGit
import TruceSaveLog

@testable import TruceCore

/// The durability work of a save, counted as the real fsync and fdatasync calls the process makes on the store's files.
///
/// `CFsyncCounter` interposes both calls for the whole test binary, so
/// libgit2's own calls (objects, refs, reflogs) are counted beside Truce's
/// (`packed-refs`, the directories it syncs). Only calls on files under the
/// test's store are counted, so tests running meanwhile in the same process
/// cannot move the figure.
@Suite(.timeLimit(.minutes(10)), .serialized, .enabled(if: truce_fsync_interposed() == 1, "fsync is interposed on Linux only"))
struct FsyncCountTests {
    /// What every `DocumentStore.save` costs, exactly, for a document's first save and for one that replaces its head
    /// alike: the pack, its index and their directory; the head ref and its directory; the head's reflog and, once, its
    /// directory; the journal's ref, directory and reflog. Exact, not a bound: a save that skips one of them (say the
    /// pack directory's, without which a power loss can keep the head and lose the pack) fails as surely as one that
    /// adds one. Before issue 13's rewrite it was 18 (loose objects, two fsyncs each). A document's first save adds one
    /// for each directory its head ref and reflog need that does not exist yet (`newDirectories`).
    static let promisedFsyncsPerSave = 11

    /// The directories a first save of `key` creates for its head ref and reflog: each is fsynced in its parent.
    static func newDirectories(for key: DocumentKey, in store: String) -> Int {
        let directory = ReferenceLayout.headsDirectory(of: key)
        return DurableFiles.missingDirectories(holding: store + "/" + directory + "x").count
            + DurableFiles.missingDirectories(holding: store + "/logs/" + directory + "x").count
    }

    /// What one `saveBatch` of `batchVersions` versions costs in all, exactly, whatever the batch's size: the pack, its
    /// index and their directory; `packed-refs` and its directory; the journal's ref, directory and reflog, and the
    /// reflog's directory. Measured before issue 13's rewrite at 10 (strace of `truce import` agrees).
    static let promisedFsyncsPerBatch = 9
    static let batchVersions = 1000

    /// The fsyncs on files under `directory` while `body` runs.
    static func fsyncs(under directory: String, _ body: () throws -> Void) throws -> Int {
        try #require(truce_fsync_watch(directory) == 0, "cannot watch \(directory)")
        try body()
        return truce_fsync_watched_count()
    }

    @Test func aSaveStaysWithinItsPromisedFsyncs() throws {
        let test = try TestStore()
        let documents = 20
        let keys = try (0..<documents).map { try DocumentKey("docs/\($0).txt") }
        // The store's very first save also creates the journal's directories, once per store: not a save's cost.
        try test.store.save(.text("warm-up\n"), to: "warm-up.txt", device: "laptop")
        let totalBefore = truce_fsync_count()
        var first: [Int] = [], replacing: [Int] = [], created: [Int] = []
        for key in keys {
            created.append(Self.newDirectories(for: key, in: test.path))
            first.append(try Self.fsyncs(under: test.path) { try test.store.save(.text("first \(key)\n"), to: key, device: "laptop") })
        }
        for key in keys {
            replacing.append(try Self.fsyncs(under: test.path) { try test.store.save(.text("second \(key)\n"), to: key, device: "laptop") })
        }
        print(
            "fsyncs per save: first saves \(first), replacing saves \(replacing) (\(Self.promisedFsyncsPerSave) and one per new directory: \(created))"
        )
        // The counter must see the saves at all (libgit2's calls among them), or every bound below would hold vacuously.
        #expect(truce_fsync_count() - totalBefore >= first.reduce(0, +) + replacing.reduce(0, +))
        #expect(first.allSatisfy { $0 >= 1 } && replacing.allSatisfy { $0 >= 1 }, "a save without any fsync seen: the counter misses calls")
        #expect(created.allSatisfy { $0 >= 2 }, "a new document's head needs a directory for its ref and one for its reflog")
        #expect(first == created.map { Self.promisedFsyncsPerSave + $0 }, "a document's first saves fsync \(first) times, creating \(created)")
        #expect(replacing.allSatisfy { $0 == Self.promisedFsyncsPerSave }, "saves that replace the head fsync \(replacing) times")
        // Every counted save is a real, current version.
        for key in keys { #expect(try test.store.contents(of: key) == .text("second \(key)\n")) }
    }

    /// libgit2 fsyncs the refs and reflogs a save writes because Truce tells it to for the whole process, not because
    /// of a line in the store's config: none of a store's config lines is one libgit2 reads for that (the deprecated
    /// `core.fsyncObjectFiles` was, and stores lose it when opened).
    @Test func aSaveFsyncsItsRefsAndReflogsWithoutAnyFsyncLineInTheConfig() throws {
        let test = try TestStore()
        try test.unsetFsyncConfig()
        let store = try DocumentStore.open(at: test.path)
        try store.save(.text("warm-up\n"), to: "warm-up.txt", device: "laptop")
        // A document's head ref and the journal's, each with its directory; their reflogs likewise.
        for (directory, least) in [("refs", 4), ("logs", 4)] {
            for round in 0..<3 {
                let count = try Self.fsyncs(under: test.path + "/" + directory) {
                    try store.save(.text("\(directory) \(round)\n"), to: DocumentKey("docs/\(round).txt"), device: "laptop")
                }
                #expect(count >= least, "a save fsynced \(count) files under \(directory)/")
            }
        }
    }

    @Test func aBatchStaysWithinItsPromisedFsyncs() throws {
        let test = try TestStore()
        let saves = try (0..<Self.batchVersions).map {
            BatchSave(key: try DocumentKey("docs/\($0 % 100).txt"), content: .text("version \($0)\n"), device: "laptop")
        }
        var ids: [VersionID] = []
        // The store's first write also makes the journal's directories (`refs/truce`, `logs/refs/truce`…), once.
        let created =
            DurableFiles.missingDirectories(holding: test.path + "/refs/truce/journal").count
            + DurableFiles.missingDirectories(holding: test.path + "/logs/refs/truce/journal").count
        let batch = try Self.fsyncs(under: test.path) { ids = try test.store.saveBatch(saves) }
        print("fsyncs: \(batch) for one saveBatch of \(Self.batchVersions) versions (\(Self.promisedFsyncsPerBatch) and \(created) new directories)")
        #expect(ids.count == Self.batchVersions)
        #expect(created > 0, "a new store has no journal yet")
        #expect(batch == Self.promisedFsyncsPerBatch + created, "one saveBatch of \(Self.batchVersions) versions fsyncs \(batch) times")
        // A second batch, the journal's directories there: the batch alone.
        let again = try Self.fsyncs(under: test.path) { _ = try test.store.saveBatch(saves) }
        #expect(again == Self.promisedFsyncsPerBatch, "a second saveBatch fsyncs \(again) times")
    }

    /// A save through the save log: one data sync of the log, and nothing else, until the checkpoint lands the saves
    /// in git with the fsyncs of one batch.
    @Test func aLoggedSaveCostsOneSyncAndTheCheckpointOneBatch() throws {
        let test = try TestStore(saveLog: true)
        // The first save creates the log (its file and directory synced once per store).
        try test.store.save(.text("warm-up\n"), to: "warm-up.txt", device: "laptop")
        try test.store.checkpoint()
        let saves = 40
        var perSave: [Int] = []
        for index in 0..<saves {
            perSave.append(
                try Self.fsyncs(under: test.path) {
                    try test.store.save(.text("v\(index)\n"), to: DocumentKey("docs/\(index % 20).txt"), device: "laptop")
                })
        }
        print("fsyncs per logged save: \(perSave)")
        #expect(perSave.allSatisfy { $0 >= 1 }, "a logged save without a sync seen: it would not be durable, or the counter misses calls")
        // A second after the first save, the store checkpoints by itself: on a slow machine one may land in the loop.
        #expect(perSave.filter { $0 > 1 }.count <= 1, "logged saves that sync more than once: \(perSave)")
        #expect(perSave.max()! <= 1 + Self.promisedFsyncsPerBatch + 1)
        let checkpoint = try Self.fsyncs(under: test.path) { try test.store.checkpoint() }
        print("fsyncs: \(checkpoint) for the checkpoint of the logged saves")
        // A batch's, and the log's new generation (its header slot): exactly, unless the store's own timer landed
        // some of the saves during the loop (then the loop's counts show it, and what is left is a smaller write).
        if perSave.allSatisfy({ $0 == 1 }) {
            #expect(checkpoint == Self.promisedFsyncsPerBatch + 1, "the checkpoint of \(saves) logged saves fsynced \(checkpoint) times")
        } else {
            #expect(checkpoint <= Self.promisedFsyncsPerBatch + 1)
        }
        for index in 20..<saves { #expect(try test.store.contents(of: DocumentKey("docs/\(index % 20).txt")) == .text("v\(index)\n")) }
    }

    /// Eight threads saving through one store's log sync at most once a save (they share a sync when one thread's
    /// save is queued while another's syncs, which `saveLogAppendsShareSyncs` shows of the log itself: how often
    /// that happens here depends on how a save's work compares with a sync on this file system), and every save
    /// lands as its document's current version, with no conflict.
    @Test func loggedSavesOfEightThreadsSyncAtMostOnceEachAndAllLand() throws {
        let test = try TestStore(saveLog: true)
        try test.store.save(.text("warm-up\n"), to: "warm-up.txt", device: "laptop")
        let threads = 8, savesEach = 25
        let store = test.store
        let syncs = try Self.fsyncs(under: test.path) {
            DispatchQueue.concurrentPerform(iterations: threads) { thread in
                for index in 0..<savesEach {
                    do {
                        try store.save(.text("\(thread) \(index)\n"), to: DocumentKey("t\(thread)/\(index % 5).txt"), device: "t\(thread)")
                    } catch {
                        Issue.record("thread \(thread), save \(index): \(error)")
                    }
                }
            }
        }
        print("fsyncs: \(syncs) for \(threads * savesEach) logged saves on \(threads) threads")
        #expect(syncs >= 1)
        // A checkpoint may land meanwhile and add a batch's, and the log's header.
        #expect(syncs <= threads * savesEach + Self.promisedFsyncsPerBatch + 1, "logged saves synced more than once each")
        for thread in 0..<threads {
            for document in 0..<5 {
                let key = try DocumentKey("t\(thread)/\(document).txt")
                #expect(try store.contents(of: key) == .text("\(thread) \(savesEach - 5 + document)\n"))
                #expect(try store.unresolvedConflictVersions(of: key).isEmpty)
            }
        }
    }

    /// The save log's group commit, made certain: records queued before anyone waits are written by the first
    /// waiter with one write and one sync, and each waiter gets its own sequence numbers back.
    @Test func recordsQueuedTogetherShareOneSync() throws {
        let directory = TemporaryDirectory("truce-savelog")
        let log = try SaveLog(path: directory.path + "/save.log")
        _ = try log.append([[1]])
        var sequences: [[UInt64]] = []
        let syncs = try Self.fsyncs(under: directory.path) {
            let tickets = try (0..<5).map { index in try log.enqueue([[UInt8(index)], [UInt8(index), 9]]) }
            sequences = try tickets.reversed().map { try log.wait(for: $0) }.reversed()
        }
        #expect(syncs == 1, "five queued tickets took \(syncs) syncs")
        let expectedSequences: [[UInt64]] = (0..<5).map { (index: Int) -> [UInt64] in [UInt64(2 + 2 * index), UInt64(3 + 2 * index)] }
        #expect(sequences == expectedSequences)
        let queuedPayloads: [[UInt8]] = (0..<5).flatMap { (index: Int) -> [[UInt8]] in [[UInt8(index)], [UInt8(index), 9]] }
        #expect(try log.records().map(\.payload) == [[1]] + queuedPayloads)
    }

    /// 8 threads × 200 appends at once: every append lands once, with at most one sync each (how many share one
    /// depends on timing; `recordsQueuedTogetherShareOneSync` shows the sharing itself).
    @Test func saveLogAppendsOnThreadsLandOnceAndSyncAtMostOnceEach() throws {
        let directory = TemporaryDirectory("truce-savelog")
        let log = try SaveLog(path: directory.path + "/save.log")
        let threads = 8, perThread = 200
        var result: (appended: [UInt64: [UInt8]], problems: [String]) = ([:], [])
        let syncs = try Self.fsyncs(under: directory.path) {
            result = appendOnThreads(threads, perThread: perThread) { thread, index in
                let payload = saveLogCrashPayload(round: 0, thread: thread, index: index)
                return (try log.append([payload])[0], payload)
            }
        }
        print("save log: \(syncs) fdatasyncs for \(threads * perThread) appends on \(threads) threads")
        #expect(result.problems.isEmpty, "\(result.problems)")
        #expect(Set(result.appended.keys) == Set(1...UInt64(threads * perThread)))
        let read = try log.records()
        #expect(read.count == threads * perThread)
        #expect(read.allSatisfy { result.appended[$0.sequence] == $0.payload }, "a payload read back is not the one appended")
        #expect(syncs >= 1, "no sync seen: the counter misses the log's calls")
        #expect(syncs <= threads * perThread, "more syncs than appends")
    }
    /// A sync that brings nothing syncs as many files with 24 replicas on the hub as with 2: the replicas' manifests
    /// it offers in negotiation go into its scratch repository as one file, not one synced ref each.
    @Test func aSyncThatBringsNothingCostsTheSameFsyncsWhateverTheNumberOfReplicas() throws {
        let hub = TemporaryDirectory("truce-hub")
        #expect(try git(["init", "-q", "--bare", hub.path]).status == 0)
        func join(_ index: Int) throws -> TestStore {
            let replica = try TestStore()
            try replica.store.save(.text("\(index)\n"), to: DocumentKey("r/\(index).md"), device: "device\(index)")
            _ = try replica.store.sync(with: hub.path)
            return replica
        }
        let reader = try join(0)
        _ = try join(1)
        _ = try reader.store.sync(with: hub.path)
        let withTwo = try Self.fsyncs(under: reader.path) { _ = try reader.store.sync(with: hub.path) }
        for index in 2..<24 { _ = try join(index) }
        _ = try reader.store.sync(with: hub.path)
        let withMany = try Self.fsyncs(under: reader.path) { _ = try reader.store.sync(with: hub.path) }
        #expect(withMany == withTwo, "a sync that brings nothing: \(withTwo) fsyncs with 2 replicas, \(withMany) with 24")
    }
}
