import Synchronization
internal import TruceGit
internal import TruceSaveLog

/// Reads the change journal from the last entry delivered and fans each change out to every live `events` sequence.
///
/// Reading is the only way events are made, for this object's writes and
/// everyone else's alike, and one position is kept per store object, so a
/// change is delivered once whoever wrote it and whoever noticed it first
/// (the writer itself or the watcher). A `StoreWatcher` runs while at least
/// one sequence is live.
final class EventHub: Sendable {
    private struct Listeners {
        var next = 0
        var continuations: [Int: AsyncStream<DocumentStateChange>.Continuation] = [:]
        var watcher: StoreWatcher?
    }

    /// Where the next read starts: after `entry` (nil for an empty journal), or unknown when the journal could not be read.
    private enum Position {
        case unknown
        case after(ObjectID?)
    }

    /// Taken only for short moments and never around a store read, so that asking `hasListeners` can never wait on a read.
    private let listeners = Mutex(Listeners())
    /// Logged saves whose events went out when the save returned (`deliverEarly`): skipped when the checkpoint
    /// journals them.
    private let deliveredEarly = Mutex(Set<VersionID>())
    /// Held around each read of the journal, so reads, and the order of what they deliver, follow one another.
    private let position = Mutex(Position.unknown)

    /// True while an `events` sequence is live: otherwise a write does not read the journal back.
    var hasListeners: Bool { listeners.withLock { !$0.continuations.isEmpty } }

    /// The watcher that runs while sequences are live (for tests that check it stops).
    var watcher: StoreWatcher? { listeners.withLock { $0.watcher } }

    deinit {
        let (continuations, watcher) = listeners.withLock { ($0.continuations.values.map { $0 }, $0.watcher) }
        watcher?.stop()
        for continuation in continuations { continuation.finish() }
    }

    /// A new sequence that sees every change recorded after this call.
    func subscribe(to store: StoreAccess) -> AsyncStream<DocumentStateChange> {
        let (stream, continuation) = AsyncStream.makeStream(of: DocumentStateChange.self, bufferingPolicy: .bufferingNewest(4096))
        position.withLock { position in
            if hasListeners {
                // Changes recorded before this call go to the sequences already live, not to the new one.
                read(from: store, at: &position)
            } else {
                position = Self.journalTip(of: store)
            }
            let id = listeners.withLock { listeners in
                listeners.next += 1
                return listeners.next
            }
            continuation.onTermination = { [weak self] _ in self?.unsubscribe(id) }
            listeners.withLock { listeners in
                listeners.continuations[id] = continuation
                if listeners.watcher == nil {
                    listeners.watcher = StoreWatcher(watching: store.path) { [weak store] in
                        guard let store else { return }
                        store.eventHub.deliver(from: store)
                    }
                }
            }
        }
        return stream
    }

    /// Reads the journal from the last position and delivers what is new; nothing to do while no one listens.
    func deliver(from store: StoreAccess) {
        guard hasListeners else { return }
        position.withLock { read(from: store, at: &$0) }
    }

    /// Delivers the event of a save this store object logged, at once: the journal records it only at the checkpoint,
    /// and the read that finds it there then skips it.
    func deliverEarly(_ event: DocumentStateChange) {
        guard hasListeners else { return }
        deliveredEarly.withLock { _ = $0.insert(event.version) }
        publish([event])
    }

    private func publish(_ events: [DocumentStateChange]) {
        let continuations = listeners.withLock { $0.continuations.values.map { $0 } }
        for event in events { for continuation in continuations { continuation.yield(event) } }
    }

    private func read(from store: StoreAccess, at position: inout Position) {
        guard case .after(let last) = position else {
            position = Self.journalTip(of: store)
            return
        }
        // The journal as git has it: a logged save's event went out when it was saved, and another process's comes with
        // its checkpoint.
        let read = try? store.read { session -> (tip: ObjectID?, events: [DocumentStateChange]) in
            let engine = session.engine
            guard let tip = try engine.repository.reference(ChangeJournal.reference), tip != last else { return (last, []) }
            // A journal that no longer holds `last` was replaced: follow the new one from its tip.
            guard let changes = try ChangeJournal(repository: engine.repository).changes(from: tip, after: last) else { return (tip, []) }
            return (tip, try engine.stateChanges(for: changes))
        }
        // A failed read is tried again on the next wake-up, from the same position.
        guard let read else { return }
        position = .after(read.tip)
        let fresh = deliveredEarly.withLock { early in
            read.events.filter { early.remove($0.version) == nil }
        }
        publish(fresh)
    }

    private func unsubscribe(_ id: Int) {
        let idle = listeners.withLock { listeners -> StoreWatcher? in
            listeners.continuations.removeValue(forKey: id)
            guard listeners.continuations.isEmpty else { return nil }
            defer { listeners.watcher = nil }
            return listeners.watcher
        }
        idle?.stop()
    }

    private static func journalTip(of store: StoreAccess) -> Position {
        do {
            return .after(try store.read { try $0.repository.reference(ChangeJournal.reference) })
        } catch {
            return .unknown
        }
    }
}
