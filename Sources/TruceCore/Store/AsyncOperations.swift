import Foundation
import Synchronization
internal import TruceGit

extension Cancellation {
    /// Throws `TruceError.cancelled` once the flag is set: called only where stopping leaves the store whole.
    func check() throws(TruceError) {
        if isCancelled { throw .cancelled }
    }
}

extension DocumentStore {
    /// Runs `work` on a thread of its own, off Swift's cooperative pool (libgit2 blocks on disk and network), and sets
    /// the `Cancellation` it is handed when the calling task is cancelled.
    ///
    /// A task cancelled before the thread starts throws `TruceError.cancelled` without running `work`.
    static func onOwnThread<Value: Sendable>(
        _ work: @escaping @Sendable (Cancellation) throws(TruceError) -> Value
    ) async throws(TruceError) -> Value {
        let cancellation = Cancellation()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, TruceError>, Never>) in
                let thread = Thread {
                    continuation.resume(
                        returning: Result { () throws(TruceError) -> Value in
                            try cancellation.check()
                            return try work(cancellation)
                        })
                }
                // A secondary thread's default stack (512 KiB on Darwin) is small for libgit2 under Swift frames.
                thread.stackSize = 8 << 20
                thread.name = "truce store work"
                thread.start()
            }
        } onCancel: {
            cancellation.cancel()
        }
        return try result.get()
    }

    /// Exchanges versions with another store, off the calling task's thread; cancelling the task stops it.
    ///
    /// The asynchronous `sync(with:)`: see `sync(with:resolving:device:progress:)`.
    public func sync(with remote: String) async throws(TruceError) -> SyncReport {
        try await sync(with: remote, resolving: nil)
    }

    /// Exchanges versions with another store and settles what stays in conflict with the resolvers that decide on
    /// their own, sending those resolutions back in the same call; cancelling the task stops it with `TruceError.cancelled`.
    ///
    /// Resolutions are a function of the heads they settle, so when the other
    /// replica resolves the same conflict it writes the same commit: resolving
    /// after every sync converges. What needs a person is left as it is and
    /// reported in `needsPerson`. `progress` hears the running traffic, for a
    /// progress line.
    ///
    /// The transfer runs on a thread of its own. A cancellation during the
    /// download aborts the transfer in libgit2's progress callback, and one
    /// before adopting stops there: either way nothing is adopted and the
    /// store is as it was. Once adopting has begun it runs to the end (the
    /// journal and the heads land whole); a cancellation then stops the send
    /// or the resolving that follows, and keeps what was adopted.
    public func sync(
        with remote: String, resolving registry: ResolverRegistry?, device: String? = nil,
        progress: (@Sendable (SyncReport.Traffic) -> Void)? = nil
    ) async throws(TruceError) -> SyncReport {
        // Checked before anything moves: the default device is used only with a registry, but a bad one fails at once.
        let device = try registry.map { _ throws(TruceError) in try author(device) }
        var exchange = try await Self.onOwnThread { [self] (cancellation) throws(TruceError) in
            try self.exchange(with: remote, progress: progress, cancellation: cancellation)
        }
        guard let registry else { return try report(of: exchange, resolved: [], needsPerson: []) }
        var resolved: [DocumentKey] = [], needsPerson: [DocumentKey] = []
        let results = try await resolveAll(nil, registry: registry, resolverName: nil, device: device)
        for (key, result) in results.sorted(by: { $0.key < $1.key }) {
            if case .resolved = result { resolved.append(key) } else { needsPerson.append(key) }
        }
        if !resolved.isEmpty {
            let first = exchange
            exchange = try await Self.onOwnThread { [self] (cancellation) throws(TruceError) in
                var again = first
                try sendAgain(&again, cancellation: cancellation)
                return again
            }
        }
        return try report(of: exchange, resolved: resolved, needsPerson: needsPerson)
    }

    /// Reclaims space off the calling task's thread; cancelling the task stops it before the new pack is written.
    ///
    /// What runs before that point changes no document: it clears stale
    /// locks, journals what a crash left out, drops superseded head refs and
    /// expires old reflog entries. A cancelled prune deletes no object.
    @discardableResult
    public func prune(expire: TimeInterval = Expiry.defaultGrace, progress: (@Sendable (String) -> Void)? = nil) async throws(TruceError)
        -> PruneReport
    {
        try await Self.onOwnThread { [self] (cancellation) throws(TruceError) in
            try prune(expire: expire, progress: progress, cancellation: cancellation)
        }
    }

    /// Saves many versions as one pack, off the calling task's thread; cancelling the task stops it before anything is written.
    ///
    /// `progress` hears (saves written to memory, saves in all). A cancelled
    /// batch throws `TruceError.cancelled` and leaves no object, head or
    /// journal entry behind.
    public func saveBatch(_ saves: [BatchSave], progress: (@Sendable (_ done: Int, _ total: Int) -> Void)? = nil) async throws(TruceError)
        -> [VersionID]
    {
        try await Self.onOwnThread { [self] (cancellation) throws(TruceError) in
            try saveBatch(saves, cancellation: cancellation, progress: progress)
        }
    }
}
