import Foundation
import Synchronization
import TestSupport
import Testing

@testable import TruceCore

/// A sync's transfer and a prune's repack run on a repository handle of their own: the store's other calls, from
/// another thread of the same process, do not wait behind them.
@Suite(.timeLimit(.minutes(10))) struct LongWorkTests {
    /// Whether a read started from inside a long operation's progress finished while that operation still ran.
    final class ReadDuring: Sendable {
        /// What the first read found ("read: settled"), or that it was still waiting after the time allowed.
        let outcome = Mutex<String?>(nil)
        private let state = Mutex<String?>(nil)

        /// Reads `key`'s state on another thread and waits for it at most `seconds`, once; records what happened.
        func read(_ key: DocumentKey, of store: DocumentStore, seconds: Double = 10) {
            let isFirst = outcome.withLock { value -> Bool in
                guard value == nil else { return false }
                value = "started"
                return true
            }
            guard isFirst else { return }
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                let found = (try? store.state(of: key)).map { "\($0)" } ?? "failed"
                self.state.withLock { $0 = found }
                done.signal()
            }
            // Only this side writes the verdict: a read that finishes after the time allowed still counts as waiting.
            let inTime = done.wait(timeout: .now() + seconds) == .success
            let found = state.withLock { $0 } ?? "nothing"
            outcome.withLock { $0 = inTime ? "read: \(found)" : "timed out behind the operation" }
        }
    }

    @Test func aReadDuringASyncsTransferDoesNotWaitForIt() async throws {
        let daemon = try GitDaemon()
        defer { daemon.server.stop() }
        let hub = try daemon.makeHub()
        let laptop = try TestStore(), phone = try TestStore()
        _ = try await laptop.store.saveBatch(
            (0..<300).map {
                BatchSave(
                    key: DocumentKey(stringLiteral: "d/\($0).md"), content: .text("\($0) " + String(repeating: "x", count: 2000) + "\n"),
                    device: "laptop")
            })
        _ = try await laptop.store.sync(with: hub)
        try phone.store.save(.text("mine\n"), to: "own.md", device: "phone")
        let during = ReadDuring()
        let report = try await phone.store.sync(with: hub, resolving: nil, device: "phone") { traffic in
            if traffic.receivedBytes > 0 { during.read("own.md", of: phone.store) }
        }
        #expect(report.received.count == 300)
        #expect(during.outcome.withLock { $0 } == "read: settled")
    }

    @Test func aReadDuringAPruneDoesNotWaitForIt() async throws {
        let test = try TestStore()
        for round in 0..<3 {
            _ = try await test.store.saveBatch(
                (0..<200).map { BatchSave(key: DocumentKey(stringLiteral: "d/\($0).md"), content: .text("\(round) \($0)\n"), device: "laptop") })
        }
        let during = ReadDuring()
        let report = try await test.store.prune(expire: 0) { _ in during.read("d/7.md", of: test.store) }
        #expect(report.packedObjects > 0)
        #expect(during.outcome.withLock { $0 } == "read: settled")
        #expect(try test.store.contents(of: "d/7.md") == .text("2 7\n"))
    }
}
