import Foundation
import Synchronization
import TestSupport
import Testing

@testable import TruceCore
@testable import TruceGit

/// `events` from every writer: this object, another `DocumentStore` on the same path, another process, a sync into the store.
@Suite(.timeLimit(.minutes(10))) struct EventsTests {
    /// Runs the built `truce` against `store` and returns the version id it printed.
    static func truceSave(_ text: String, to key: String, in store: String, device: String, base: String? = nil) async throws -> VersionID {
        let result = try await runAsync(
            truceExecutable, ["--store", store, "save", key, "-", "--device", device] + (base.map { ["--base", $0] } ?? []),
            input: .text(text))
        #expect(result.status == 0, "truce save: \(result.errorOutput)")
        return try #require(VersionID(hex: result.output.trimmingCharacters(in: .whitespacesAndNewlines)), "truce save printed \(result.output)")
    }

    @Test func aSaveByAnotherProcessArrivesWithinOneSecond() async throws {
        let test = try TestStore()
        try test.store.save(.text("0\n"), to: "a.txt", device: "laptop")
        let recorder = EventRecorder(test.store)
        let saved = try await Self.truceSave("1\n", to: "a.txt", in: test.path, device: "phone")
        // The clock starts when the other process has exited, that is when its save was acknowledged.
        let events = try await recorder.wait(within: 1, for: "the other process's save") { $0.contains { $0.version == saved } }
        #expect(events.map { "\($0.kind) \($0.key) \($0.author) \($0.previous)→\($0.current)" } == ["save a.txt phone settled→settled"])
        #expect(events.first?.change.date == (try test.store.currentVersion(of: "a.txt"))?.modificationDate)
    }

    @Test func conflictsResolutionsAndDeletionsByOtherProcessesCarryTheirStates() async throws {
        let test = try TestStore()
        let base = try test.store.save(.text("0\n"), to: "a.txt", device: "laptop")
        let recorder = EventRecorder(test.store)
        let left = try await Self.truceSave("1\n", to: "a.txt", in: test.path, device: "phone", base: base.id.hex)
        let right = try await Self.truceSave("2\n", to: "a.txt", in: test.path, device: "tablet", base: base.id.hex)
        let resolved = try await runAsync(
            truceExecutable, ["--store", test.path, "resolve", "a.txt", "--resolver", "overwrite-with-current"],
            environment: ["TRUCE_DEVICE": "desktop"])
        #expect(resolved.status == 0, "truce resolve: \(resolved.errorOutput)")
        let deleted = try await runAsync(truceExecutable, ["--store", test.path, "delete", "a.txt", "--device", "phone"])
        #expect(deleted.status == 0, "truce delete: \(deleted.errorOutput)")
        let events = try await recorder.wait(within: 2, for: "four changes") { $0.count >= 4 }
        #expect(
            events.map { "\($0.kind) \($0.author) \($0.previous)→\($0.current)" } == [
                "save phone settled→settled", "save tablet settled→in conflict", "resolution desktop in conflict→settled",
                "delete phone settled→deleted",
            ])
        #expect(events.prefix(2).map(\.version) == [left, right])
        #expect(events[1].becameInConflict && events[2].wasResolved)
    }

    @Test func anotherStoreObjectOnTheSamePathIsSeenAndOwnChangesComeOnce() async throws {
        let test = try TestStore()
        let other = try DocumentStore.open(at: test.path)
        let here = EventRecorder(test.store)
        let there = EventRecorder(other)
        let first = try other.save(.text("x\n"), to: "b.txt", device: "tablet")
        // A later change from the same writer: once it has arrived, a repeat of the first would have arrived before it.
        let second = try other.delete("b.txt", device: "tablet")
        for recorder in [here, there] {
            let events = try await recorder.wait(within: 3, for: "both changes") { $0.contains { $0.version == second.id } }
            #expect(events.map(\.version) == [first.id, second.id])
            #expect(events.map { "\($0.previous)→\($0.current)" } == ["absent→settled", "settled→deleted"])
        }
    }

    /// The watcher reads the journal, then the heads: a save that landed in between must not change the state the
    /// earlier entry reports (this made the test above fail now and then).
    @Test func anEntryReadBeforeALaterSaveLandedKeepsItsOwnState() throws {
        let test = try TestStore()
        let first = try test.store.save(.text("x\n"), to: "b.txt", device: "tablet")
        let firstChange = Change(kind: .save, key: "b.txt", version: first.id, author: "tablet", date: first.modificationDate)
        let second = try test.store.save(.text("y\n"), to: "b.txt", device: "tablet")
        let events = try test.store.withEngine { try $0.stateChanges(for: [firstChange]) }
        #expect(events.map { "\($0.previous)→\($0.current)" } == ["absent→settled"], "the heads already held \(second.id.short)")
    }

    @Test func manyChangesReadAtOnceEachGetTheStateTheyMadeThen() async throws {
        let test = try TestStore()
        let original = try test.store.save(.text("0\n"), to: "a.txt", device: "laptop")
        let recorder = EventRecorder(test.store)
        let other = try DocumentStore.open(at: test.path)
        // One batch moves the journal once, so the watcher reads the three entries together.
        let ids = try await other.saveBatch([
            BatchSave(key: "a.txt", content: .text("1\n"), device: "phone"),
            BatchSave(key: "a.txt", content: .text("2\n"), device: "tablet", base: original.id),
            BatchSave(key: "b.txt", content: .text("new\n"), device: "phone"),
        ])
        let events = try await recorder.wait(within: 3, for: "the batch") { $0.count >= 3 }
        #expect(events.map(\.version) == ids)
        #expect(
            events.map { "\($0.key) \($0.previous)→\($0.current)" } == ["a.txt settled→settled", "a.txt settled→in conflict", "b.txt absent→settled"])
    }

    @Test func aSyncPushingIntoThisStoreFromAnotherProcessIsSeen() async throws {
        let test = try TestStore()
        let replica = try TestStore()
        let recorder = EventRecorder(test.store)
        let made = try replica.store.save(.text("from afar\n"), to: "notes/a.md", device: "phone")
        let sync = try await runAsync(truceExecutable, ["--store", replica.path, "sync", test.path])
        #expect(sync.status == 0, "truce sync: \(sync.errorOutput)")
        let events = try await recorder.wait(within: 3, for: "the pushed version") { $0.contains { $0.version == made.id } }
        #expect(events.map { "\($0.kind) \($0.key) \($0.author) \($0.previous)→\($0.current)" } == ["save notes/a.md phone absent→settled"])
    }

    @Test func watchingStopsWhenTheLastSequenceEnds() async throws {
        let test = try TestStore()
        let first = EventRecorder(test.store)
        let second = EventRecorder(test.store)
        let watcher = try #require(test.store.access.eventHub.watcher, "no watcher while sequences are live")
        #if os(Linux)
            #expect(watcher.mechanism == .inotify)
        #endif
        first.stop()
        try await waitUntil("the first sequence to end", within: 2) { first.hasEnded }
        #expect(!watcher.hasFinished, "the watcher stopped while a sequence was still live")
        second.stop()
        try await waitUntil("the watcher to stop", within: 2) { watcher.hasFinished }
        #expect(test.store.access.eventHub.watcher == nil)
    }

    @Test func aSequenceLeftAfterBreakStopsTheWatcherWhenItGoes() async throws {
        let test = try TestStore()
        let watcher: StoreWatcher
        do {
            let events = test.store.events
            watcher = try #require(test.store.access.eventHub.watcher)
            try test.store.save(.text("x\n"), to: "a.txt", device: "laptop")
            for await event in events {
                #expect(event.key == "a.txt")
                break
            }
        }
        try await waitUntil("the watcher to stop once the sequence was dropped", within: 2) { watcher.hasFinished }
        #expect(test.store.access.eventHub.watcher == nil)
    }

    @Test func releasingTheStoreEndsItsSequencesAndStopsItsWatcher() async throws {
        let directory = TemporaryDirectory()
        weak var released: DocumentStore?
        let (recorder, watcher) = try {
            let store = try DocumentStore.create(at: directory.file("store"))
            released = store
            let recorder = EventRecorder(store)
            return (recorder, try #require(store.access.eventHub.watcher))
        }()
        try await waitUntil("the store to be released", within: 2) { released == nil }
        try await waitUntil("the sequence to end", within: 2) { recorder.hasEnded }
        try await waitUntil("the watcher to stop", within: 2) { watcher.hasFinished }
    }

    @Test(arguments: [false, true])
    func theWatcherWakesForAnotherProcessAndNeverSpins(polling: Bool) async throws {
        let test = try TestStore()
        try test.store.save(.text("0\n"), to: "a.txt", device: "laptop")
        let seen = WakeLog()
        let store = test.store
        let watcher = StoreWatcher(watching: test.path, polling: polling) {
            seen.record(try? store.withEngine { try $0.repository.reference(ChangeJournal.reference) })
        }
        defer { watcher.stop() }
        #if os(Linux)
            #expect(watcher.mechanism == (polling ? .poll : .inotify))
        #endif
        try await waitUntil("the first wake-up", within: 3) { seen.wakes >= 1 }
        // Nothing changes for a while: a watch wakes not at all, a poll once per interval; either would wake thousands of times if it spun.
        let quiet = seen.wakes
        let start = ContinuousClock.now
        try await Task.sleep(for: .milliseconds(600))
        let wakes = seen.wakes - quiet
        // A loaded machine may sleep far longer than asked: allow one poll per interval actually elapsed, and one more.
        let intervals = (ContinuousClock.now - start) / .milliseconds(Int(StoreWatcher.pollInterval))
        #expect(
            Double(wakes) <= (polling ? intervals.rounded(.up) + 1 : 0), "\(wakes) wake-ups in \(ContinuousClock.now - start) while nothing changed")
        let saved = try await Self.truceSave("1\n", to: "a.txt", in: test.path, device: "phone")
        let tip = try #require(try store.withEngine { try $0.repository.reference(ChangeJournal.reference) })
        try await waitUntil("a wake-up that sees the journal entry for \(saved)", within: 3) { seen.lastTip == tip }
        watcher.stop()
        try await waitUntil("the watcher to stop", within: 2) { watcher.hasFinished }
    }
}

/// What a watcher's callback saw: how often it ran, and the journal tip it read last.
private final class WakeLog: Sendable {
    private let state = Mutex<(wakes: Int, tip: ObjectID?)>((0, nil))
    var wakes: Int { state.withLock { $0.wakes } }
    var lastTip: ObjectID? { state.withLock { $0.tip } }
    func record(_ tip: ObjectID??) { state.withLock { $0 = ($0.wakes + 1, tip ?? nil) } }
}
