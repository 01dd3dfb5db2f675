import Foundation
import Synchronization
import TestSupport
import Testing

@testable import TruceCore

/// The async overloads of the long operations, their cancellation, and the device a store is opened with.
@Suite(.timeLimit(.minutes(10))) struct AsyncOperationsTests {
    static let start = Date(timeIntervalSince1970: 1_796_000_000)

    /// `count` saves of distinct documents with fixed dates, so two stores given them write the same version ids.
    static func saves(_ count: Int, device: String = "bulk") -> [BatchSave] {
        (0..<count).map { index in
            let date = start.addingTimeInterval(Double(index))
            return BatchSave(
                key: try! DocumentKey("docs/\(index).txt"), content: .text("document \(index)\n"), device: device, date: date,
                committerDate: date)
        }
    }

    /// The task a progress closure cancels, set once the task exists; `cancel()` waits for it (a progress call may come first).
    final class TaskHandle<Value: Sendable>: Sendable {
        private let task = Mutex<Task<Value, any Error>?>(nil)

        func set(_ task: Task<Value, any Error>) { self.task.withLock { $0 = task } }

        func cancel() {
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline {
                if let task = task.withLock({ $0 }) { return task.cancel() }
                usleep(1000)
            }
        }
    }

    /// Runs `body` in a synchronous context, where a call picks the synchronous overload.
    static func synchronously<Value>(_ body: () throws -> Value) rethrows -> Value { try body() }

    static func journal(of test: TestStore) throws -> String { try test.git("rev-list", ChangeJournal.reference) }

    @Test func theDeviceGivenAtOpenAuthorsWhatIsSavedWithoutOne() async throws {
        let directory = TemporaryDirectory()
        let laptop = try DocumentStore.create(at: directory.file("store"), device: " laptop ")
        #expect(laptop.device == "laptop")
        #expect(try laptop.save(.text("a\n"), to: "a.txt").deviceName == "laptop")
        #expect(try laptop.save(.text("b\n"), to: "a.txt", device: "named").deviceName == "named")
        let phone = try DocumentStore.open(at: directory.file("store"), device: "phone")
        let saved = try phone.save(.text("c\n"), to: "a.txt")
        #expect(saved.deviceName == "phone")
        #expect(try laptop.currentVersion(of: "a.txt")?.id == saved.id)
        #expect(try laptop.changes().changes.map(\.author) == ["laptop", "named", "phone"])
        // Without one, the CLI's rule: $TRUCE_DEVICE, then the host name.
        let plain = try DocumentStore.open(at: directory.file("store"))
        #expect(plain.device == nil)
        #expect(try plain.delete("a.txt").deviceName == DocumentStore.fallbackDevice.trimmingCharacters(in: .whitespaces))
    }

    @Test func aBadDeviceFailsAtOpenAndCreatesNothing() async throws {
        let directory = TemporaryDirectory()
        #expect(throws: TruceError.invalidDeviceName("a<b", reason: "git forbids '<' and '>' in author names")) {
            try DocumentStore.create(at: directory.file("store"), device: "a<b")
        }
        #expect(!FileManager.default.fileExists(atPath: directory.file("store")))
        await #expect(throws: TruceError.invalidDeviceName("", reason: "it is empty")) {
            try await DocumentStore(at: URL(fileURLWithPath: directory.file("other")), device: "")
        }
        #expect(!FileManager.default.fileExists(atPath: directory.file("other")))
        let test = try TestStore()
        #expect(throws: TruceError.invalidDeviceName("tab\there", reason: "it contains a control character")) {
            try DocumentStore.open(at: test.path, device: "tab\there")
        }
    }

    @Test func theURLInitializerCreatesAMissingStoreAndOpensAnExistingOne() async throws {
        let directory = TemporaryDirectory()
        let url = URL(fileURLWithPath: directory.file("notes"))
        let first = try await DocumentStore(at: url, device: "laptop")
        let saved = try first.save(.text("hello\n"), to: "a.txt")
        let again = try await DocumentStore(at: url, device: "phone")
        #expect(try again.currentVersion(of: "a.txt")?.id == saved.id)
        #expect(try again.save(.text("bye\n"), to: "a.txt").deviceName == "phone")
        // A directory holding something else is not taken over.
        try FileManager.default.createDirectory(atPath: directory.file("elsewhere"), withIntermediateDirectories: true)
        _ = directory.write(.text("x"), to: "elsewhere/file")
        await #expect(throws: TruceError.self) {
            try await DocumentStore(at: URL(fileURLWithPath: directory.file("elsewhere")), device: "laptop")
        }
        #expect(!FileManager.default.fileExists(atPath: directory.file("elsewhere/config")))
    }

    @Test func asyncSaveBatchWritesWhatTheSynchronousOneDoesAndReportsProgress() async throws {
        let synchronous = try TestStore(), asynchronous = try TestStore()
        let expected = try Self.synchronously { try synchronous.store.saveBatch(Self.saves(50)) }
        let heard = Mutex<[Int]>([])
        let ids = try await asynchronous.store.saveBatch(Self.saves(50)) { done, total in
            #expect(total == 50)
            heard.withLock { $0.append(done) }
        }
        #expect(ids == expected)
        #expect(heard.withLock { $0 } == Array(1...50))
        // The journal entry is dated when it is written, so its commit differs once the two batches fall in different
        // seconds (a loaded machine); the changes it records must not.
        func refsButTheJournal(_ test: TestStore) throws -> [Substring] {
            try test.git("for-each-ref").split(separator: "\n").filter {
                !$0.hasSuffix("\t" + ChangeJournal.reference) && !$0.hasSuffix("\t" + StoreCreation.headBranch)
            }
        }
        #expect(try refsButTheJournal(asynchronous) == refsButTheJournal(synchronous))
        #expect(try refsButTheJournal(synchronous).count == 50)
        let journalTree = ChangeJournal.reference + "^{tree}"
        #expect(try asynchronous.git("rev-parse", journalTree) == synchronous.git("rev-parse", journalTree))
        #expect(try asynchronous.git("fsck", "--strict", "--no-dangling").isEmpty)
    }

    @Test func cancellingASaveBatchMidwayWritesNothing() async throws {
        let test = try TestStore()
        try test.store.save(.text("before\n"), to: "docs/0.txt", device: "laptop")
        let before = snapshot(ofStore: test.path)
        let (references, journal) = (try test.git("for-each-ref"), try Self.journal(of: test))
        let handle = TaskHandle<[VersionID]>()
        let store = test.store
        let saves = Self.saves(2000)
        let task = Task {
            try await store.saveBatch(saves) { done, total in
                if done == total / 2 { handle.cancel() }
            }
        }
        handle.set(task)
        await #expect(throws: TruceError.cancelled) { try await task.value }
        #expect(try test.git("for-each-ref") == references)
        #expect(try Self.journal(of: test) == journal)
        #expect(try test.git("fsck", "--strict").isEmpty)
        #expect(snapshot(ofStore: test.path) == before, "a cancelled batch changed the store's files")
        #expect(try test.store.contents(of: "docs/0.txt") == .text("before\n"))
        // The store takes the next batch as if nothing had happened.
        #expect(try await test.store.saveBatch(Self.saves(10)).count == 10)
    }

    @Test func aTaskCancelledBeforeItStartsRunsNothing() async throws {
        let test = try TestStore()
        try test.store.save(.text("a\n"), to: "a.txt", device: "laptop")
        try test.store.save(.text("b\n"), to: "a.txt", device: "laptop")
        let before = snapshot(ofStore: test.path)
        let store = test.store
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await store.prune(expire: 0)
        }
        await #expect(throws: TruceError.cancelled) { try await task.value }
        #expect(snapshot(ofStore: test.path) == before)
        let report = try await test.store.prune(expire: 0)
        #expect(report.packedObjects > 0)
        #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)
    }

    static let shouting = ResolverRegistry([ShoutingResolver()])

    /// A store with `count` documents each in conflict between a laptop's and a phone's edit that three-way merges.
    static func conflicted(_ count: Int) throws -> TestStore {
        let test = try TestStore()
        let base = "one\ntwo\nthree\nfour\n"
        for index in 0..<count {
            try test.makeConflict(
                DocumentKey("docs/\(index).md"), base: .text(base),
                heads: [
                    ("laptop", .text(base.replacingOccurrences(of: "one", with: "ONE"))),
                    ("phone", .text(base.replacingOccurrences(of: "four", with: "FOUR"))),
                ])
        }
        return test
    }

    @Test func resolveAllSettlesAsResolvingEachDocumentDoes() async throws {
        let first = try Self.conflicted(6), second = try TestStore()
        _ = try await second.store.sync(with: first.path)
        var expected: [DocumentKey: ResolveResult] = [:]
        for versions in try first.store.documentsInConflict() {
            expected[versions.key] = try await first.store.resolve(
                versions.key, registry: Self.shouting, resolverName: "shout", device: "laptop")
        }
        #expect(expected.count == 6)
        let heard = Mutex<[Int]>([])
        let results = try await second.store.resolveAll(registry: Self.shouting, resolverName: "shout", device: "laptop") { done, total in
            #expect(total == 6)
            heard.withLock { $0.append(done) }
        }
        #expect(heard.withLock { $0 }.last == 6)
        #expect(results.count == 6)
        for (key, result) in expected {
            guard case .resolved(let version, _, .settled) = result, case .resolved(let other, _, .settled) = results[key] else {
                Issue.record("\(key): \(result) and \(String(describing: results[key]))")
                continue
            }
            // A resolution is a function of the heads it settles: both stores wrote the same commit.
            #expect(version.id == other.id)
        }
    }

    @Test func cancellingAResolveAllBeforeItWritesLeavesEveryConflict() async throws {
        let test = try Self.conflicted(4)
        let before = snapshot(ofStore: test.path)
        let handle = TaskHandle<[DocumentKey: ResolveResult]>()
        let store = test.store
        let task = Task {
            try await store.resolveAll(registry: Self.shouting, resolverName: "shout", device: "laptop") { done, _ in
                if done == 2 { handle.cancel() }
            }
        }
        handle.set(task)
        await #expect(throws: TruceError.cancelled) { try await task.value }
        #expect(snapshot(ofStore: test.path) == before)
        #expect(try test.store.documentsInConflict().count == 4)
    }

    /// A laptop that synced a large, incompressible document and some small ones to a hub on a git daemon.
    static func hubWithLargeDownload(_ daemon: GitDaemon) throws -> (hub: String, laptop: TestStore, big: Data) {
        let hub = try daemon.makeHub()
        let laptop = try TestStore()
        var generator = SystemRandomNumberGenerator()
        let big = Data((0..<(3 << 20)).map { _ in UInt8.random(in: 0...255, using: &generator) })
        try laptop.store.save(big, to: "big.bin", device: "laptop")
        _ = try laptop.store.saveBatch(saves(20, device: "laptop"))
        _ = try laptop.store.sync(with: hub)
        return (hub, laptop, big)
    }

    @Test func asyncSyncOverTheNetworkReceivesWhatTheSynchronousOneDoes() async throws {
        let daemon = try GitDaemon()
        let (hub, laptop, big) = try Self.hubWithLargeDownload(daemon)
        let phone = try TestStore(), tablet = try TestStore()
        let expected = try Self.synchronously { try phone.store.sync(with: hub) }
        let traffic = Mutex<[SyncReport.Traffic]>([])
        let report = try await tablet.store.sync(with: hub, resolving: nil) { now in traffic.withLock { $0.append(now) } }
        #expect(report.received.map(\.version) == expected.received.map(\.version))
        #expect(report.received.count == 21)
        #expect(traffic.withLock { $0 }.contains { $0.receivedBytes > big.count })
        #expect(try tablet.store.contents(of: "big.bin") == big)
        #expect(try tablet.git("for-each-ref", "refs/truce/heads") == laptop.git("for-each-ref", "refs/truce/heads"))
    }

    /// Syncs `store` with `hub` in a task that its progress closure cancels at the first traffic `when` picks, and
    /// expects `TruceError.cancelled`; returns that traffic (nil: none was picked) and the last one heard.
    static func syncCancelled(
        _ store: DocumentStore, with hub: String, when: @escaping @Sendable (SyncReport.Traffic) -> Bool,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async -> (cancelledAt: SyncReport.Traffic?, last: SyncReport.Traffic?) {
        let handle = TaskHandle<SyncReport>()
        let heard = Mutex<(cancelledAt: SyncReport.Traffic?, last: SyncReport.Traffic?)>((nil, nil))
        let task = Task {
            try await store.sync(with: hub, resolving: nil) { traffic in
                let first = heard.withLock { heard in
                    heard.last = traffic
                    guard heard.cancelledAt == nil, when(traffic) else { return false }
                    heard.cancelledAt = traffic
                    return true
                }
                if first { handle.cancel() }
            }
        }
        handle.set(task)
        await #expect(throws: TruceError.cancelled, sourceLocation: sourceLocation) { try await task.value }
        return heard.withLock { $0 }
    }

    @Test func cancellingASyncDuringItsDownloadAdoptsNothingAndTheNextSyncConverges() async throws {
        let daemon = try GitDaemon()
        let (hub, laptop, big) = try Self.hubWithLargeDownload(daemon)
        let phone = try TestStore()
        try phone.store.save(.text("from the phone\n"), to: "phone.md", device: "phone")
        let before = snapshot(ofStore: phone.path)
        let journal = try Self.journal(of: phone)
        let (stopped, last) = await Self.syncCancelled(phone.store, with: hub) { $0.receivedBytes > 0 }
        let cancelled = try #require(stopped, "the download never reported bytes: nothing was cancelled during it")
        #expect(cancelled.receivedBytes < big.count, "the download was over before the cancellation reached it")
        // libgit2 stopped at the callback that heard the cancellation: no byte came after it.
        #expect(last?.receivedBytes == cancelled.receivedBytes)
        #expect(try Self.journal(of: phone) == journal)
        #expect(try phone.git("for-each-ref", "refs/truce/heads").split(separator: "\n").count == 1)
        #expect(try phone.git("fsck", "--strict").isEmpty)
        #expect(snapshot(ofStore: phone.path) == before, "a cancelled sync changed the store's files")

        let report = try await phone.store.sync(with: hub)
        #expect(report.received.count == 21)
        #expect(try phone.store.contents(of: "big.bin") == big)
        _ = try await laptop.store.sync(with: hub)
        #expect(try laptop.store.contents(of: "phone.md") == .text("from the phone\n"))
        #expect(try phone.git("for-each-ref", "refs/truce/heads") == laptop.git("for-each-ref", "refs/truce/heads"))
        #expect(try phone.git("fsck", "--strict", "--no-dangling").isEmpty)
    }

    /// A sync that brings more heads than one batch takes, cancelled once its second batch has begun, keeps the first
    /// batch adopted, whole, and moves no manifest copy; the next sync adopts the rest.
    @Test func cancellingASyncBetweenBatchesKeepsTheBatchAdoptedAndTheNextSyncAdoptsTheRest() async throws {
        let daemon = try GitDaemon()
        let hub = try daemon.makeHub()
        let laptop = try TestStore()
        let keys = try (0..<10).map { try DocumentKey("d/\($0).md") }
        for key in keys { try laptop.store.save(.text("\(key.rawValue)\n"), to: key, device: "laptop") }
        _ = try await laptop.store.sync(with: hub)
        let phone = try TestStore()
        let inBatches = try DocumentStore.open(at: phone.path, instrumentation: StoreInstrumentation(receiveBatchSize: 3))
        // The objects to store count on across batches: a total past the first batch's is the second batch writing.
        let firstBatchObjects = Mutex(0)
        let (stopped, _) = await Self.syncCancelled(inBatches, with: hub) { traffic in
            firstBatchObjects.withLock { first in
                guard traffic.objectsToStore > 0 else { return false }
                if first == 0 { first = traffic.objectsToStore }
                return traffic.objectsToStore > first
            }
        }
        #expect(stopped != nil, "the second batch never began: nothing was cancelled between batches")
        #expect(try phone.git("for-each-ref", "refs/truce/heads").split(separator: "\n").count == 3, "the first batch's 3 heads")
        #expect(try phone.git("for-each-ref", ReplicaManifest.root).isEmpty, "a manifest copy moved")
        // The second batch's pack is in, unreachable until the next sync adopts its heads (or prune takes it).
        #expect(try phone.git("fsck", "--strict", "--no-dangling").isEmpty)

        let report = try await inBatches.sync(with: hub)
        #expect(report.received.count == 7)
        for key in keys { #expect(try inBatches.contents(of: key) == .text("\(key.rawValue)\n"), "\(key)") }
        #expect(try phone.git("for-each-ref", ReplicaManifest.root).split(separator: "\n").count == 2, "the laptop's copy and our own")
        #expect(try phone.git("fsck", "--strict", "--no-dangling").isEmpty)
    }

    @Test func cancellingASyncWhileItPushesLeavesTheHubWithoutOurManifestAndTheNextSyncSendsIt() async throws {
        let daemon = try GitDaemon()
        let hub = try daemon.makeHub()
        let laptop = try TestStore()
        var generator = SystemRandomNumberGenerator()
        let big = Data((0..<(3 << 20)).map { _ in UInt8.random(in: 0...255, using: &generator) })
        try laptop.store.save(big, to: "big.bin", device: "laptop")
        let manifests = try laptop.git("for-each-ref", ReplicaManifest.root)
        let (stopped, last) = await Self.syncCancelled(laptop.store, with: hub) { $0.sentBytes > 0 }
        let cancelled = try #require(stopped, "the push never reported bytes: nothing was cancelled during it")
        #expect(cancelled.sentBytes < big.count, "the push was over before the cancellation reached it")
        #expect(last?.sentBytes == cancelled.sentBytes)
        #expect(try git(["-C", daemon.root + "/hub.git", "for-each-ref"]).output.isEmpty, "the hub took a ref")
        #expect(try laptop.git("for-each-ref", ReplicaManifest.root) == manifests, "the laptop moved its manifest")
        #expect(try laptop.git("fsck", "--strict", "--no-dangling").isEmpty)

        let report = try await laptop.store.sync(with: hub)
        #expect(report.sent == 1)
        let phone = try TestStore()
        _ = try await phone.store.sync(with: hub)
        #expect(try phone.store.contents(of: "big.bin") == big)
    }
}
