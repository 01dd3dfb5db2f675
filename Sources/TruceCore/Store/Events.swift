import Synchronization

/// A change of a document's state made through this store, the counterpart of `UIDocumentStateChangedNotification`.
public struct DocumentStateChange: Sendable, Equatable {
    public let key: DocumentKey
    public let previous: DocumentState
    public let current: DocumentState
    /// The version whose write changed the state.
    public let version: VersionID

    /// True when the write put the document into conflict.
    public var becameInConflict: Bool { current == .inConflict && previous != .inConflict }
    /// True when the write settled a conflict.
    public var wasResolved: Bool { previous == .inConflict && current != .inConflict }
}

extension DocumentStore {
    /// Document state changes as they happen: became in conflict, resolved, deleted, created.
    ///
    /// Each access starts a new sequence that sees the changes made after it.
    public var events: AsyncStream<DocumentStateChange> { eventHub.subscribe() }
}

/// Fans state changes out to every live subscriber.
final class EventHub: Sendable {
    private let subscribers = Mutex<(next: Int, continuations: [Int: AsyncStream<DocumentStateChange>.Continuation])>((0, [:]))

    func subscribe() -> AsyncStream<DocumentStateChange> {
        let (stream, continuation) = AsyncStream<DocumentStateChange>.makeStream(bufferingPolicy: .bufferingNewest(1024))
        let id = subscribers.withLock { state in
            state.next += 1
            state.continuations[state.next] = continuation
            return state.next
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    /// True while someone iterates an `events` sequence: writers skip the work of computing changes otherwise.
    var hasSubscribers: Bool { subscribers.withLock { !$0.continuations.isEmpty } }

    /// Sends `change` when it is a change of state; a save that leaves the state as it was is not an event.
    func publish(_ change: DocumentStateChange) {
        guard change.previous != change.current else { return }
        let continuations = subscribers.withLock { Array($0.continuations.values) }
        for continuation in continuations { continuation.yield(change) }
    }
}
