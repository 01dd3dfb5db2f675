import Foundation
import Synchronization
import Truce

/// A wait in a test that ran out of time; its description says what never happened.
public struct DeadlinePassed: Error, CustomStringConvertible {
    public let description: String
    public init(description: String) { self.description = description }
}

/// Checks `condition` every 10 ms until it holds; throws `DeadlinePassed` naming `what` once `seconds` have passed.
public func waitUntil(_ what: @autoclosure () -> String, within seconds: Double, _ condition: () throws -> Bool) async throws {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while try !condition() {
        guard ContinuousClock.now < deadline else { throw DeadlinePassed(description: "waited \(seconds) s for \(what())") }
        try await Task.sleep(for: .milliseconds(10))
    }
}

/// Collects a store's `events` in the background from the moment it is made, for tests that wait for them with a deadline.
///
/// It holds the sequence, not the store, so a test can release the store and watch the sequence end.
public final class EventRecorder: Sendable {
    private let state = Mutex<(events: [DocumentStateChange], ended: Bool)>(([], false))
    private let consumer = Mutex<Task<Void, Never>?>(nil)

    public init(_ store: DocumentStore) {
        let events = store.events
        let task = Task { [self] in
            for await event in events { record(event) }
            recordEnd()
        }
        consumer.withLock { $0 = task }
    }

    // Synchronous on purpose: Swift 6.3.1 can abort a task that takes the mutex right in its async body
    // ("freed pointer was not the last allocation", DefaultStoreTests).
    private func record(_ event: DocumentStateChange) { state.withLock { $0.events.append(event) } }
    private func recordEnd() { state.withLock { $0.ended = true } }

    /// Everything received so far, oldest first.
    public var events: [DocumentStateChange] { state.withLock { $0.events } }

    /// True once the sequence has ended (its store was released, or `stop()` ended it).
    public var hasEnded: Bool { state.withLock { $0.ended } }

    /// Waits until `condition` holds for the events received, then returns them; throws `DeadlinePassed` after `seconds`.
    @discardableResult
    public func wait(within seconds: Double, for what: String, until condition: ([DocumentStateChange]) -> Bool) async throws
        -> [DocumentStateChange]
    {
        try await waitUntil("\(what) (received so far: \(describe(events)))", within: seconds) { condition(events) }
        return events
    }

    /// Stops iterating: the sequence ends, as when an app's task is cancelled.
    public func stop() { consumer.withLock { $0?.cancel() } }

    private func describe(_ events: [DocumentStateChange]) -> String {
        events.map { "\($0.kind) \($0.key) by \($0.author) \($0.previous)→\($0.current)" }.joined(separator: "; ")
    }
}
