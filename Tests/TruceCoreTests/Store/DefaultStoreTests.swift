import Foundation
import TestSupport
import Testing
import Truce

/// A store an app creates or opens the documented way: saves go through the save log, durable on return, in git at the
/// next checkpoint, with their events at once.
@Suite(.timeLimit(.minutes(10))) struct DefaultStoreTests {
    @Test func aStoreMadeTheDocumentedWaySavesThroughItsLogWithItsEventAtOnce() async throws {
        let directory = TemporaryDirectory("truce-default")
        let store = try DocumentStore.create(at: directory.file("store"), device: "laptop")
        #expect(store.savesThroughLog)
        // On by default: nothing written to the config says so.
        #expect(try git(["-C", store.path, "config", "--get", "truce.saveLog"]).status == 1)
        let recorder = EventRecorder(store)
        var direct = store.events.makeAsyncIterator()
        let saved = try store.save(.text("one\n"), to: "notes/a.md")
        #expect(saved.state == .settled && saved.deviceName == "laptop")
        // The event comes with the save: it is in the sequence when the save returns, before its checkpoint (a second
        // later) puts the save in git.
        let first = await direct.next()
        #expect(try git(["-C", store.path, "for-each-ref", "refs/truce/heads/"]).output.isEmpty, "the save reached git before its checkpoint")
        #expect(first.map { "\($0.kind) \($0.version) \($0.previous)→\($0.current)" } == "save \(saved.id) absent→settled")
        try store.checkpoint()
        #expect(try git(["-C", store.path, "for-each-ref", "--format=%(objectname)", "refs/truce/heads/"]).output == saved.id.hex + "\n")
        // The checkpoint journals the save; the journal's read finds it and does not deliver it again.
        try store.save(.text("two\n"), to: "notes/b.md")
        try store.checkpoint()
        // Generous: what is asserted is that it comes once, and the recorder's task can wait behind the long synchronous
        // tests for the cooperative pool (once, in CI, both events had come just after a two-second deadline).
        let after = try await recorder.wait(within: 60, for: "the second save's event") { $0.count >= 2 }
        try await Task.sleep(for: .milliseconds(300))
        #expect(recorder.events.map(\.key) == ["notes/a.md", "notes/b.md"], "delivered: \(after.map(\.key))")
        #expect(try git(["-C", store.path, "fsck", "--strict"]).status == 0)
    }

    @Test func theOptOutIsOneSettingAndSavesLandInGitBeforeReturning() throws {
        let directory = TemporaryDirectory("truce-default")
        let store = try DocumentStore.create(at: directory.file("store"), device: "laptop", saveLog: false)
        #expect(!store.savesThroughLog)
        #expect(try git(["-C", store.path, "config", "--get", "truce.saveLog"]).output == "false\n")
        let saved = try store.save(.text("one\n"), to: "notes/a.md")
        #expect(try git(["-C", store.path, "for-each-ref", "--format=%(objectname)", "refs/truce/heads/"]).output == saved.id.hex + "\n")
        #expect(!FileManager.default.fileExists(atPath: store.path + "/truce-saves.log"))
        // The same store opened again keeps its setting.
        #expect(!(try DocumentStore.open(at: store.path)).savesThroughLog)
    }
}
