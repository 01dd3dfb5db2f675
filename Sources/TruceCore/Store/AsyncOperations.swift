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

    /// Exchanges versions with another store and settles what stays in conflict, off the calling task's thread;
    /// cancelling the task stops it with `TruceError.cancelled`.
    ///
    /// The work runs on a thread of its own. A cancellation during the
    /// download aborts the transfer in libgit2's progress callback, and one
    /// before adopting stops there: either way nothing is adopted and the
    /// store is as it was. Once adopting has begun it runs to the end (the
    /// journal and the heads land whole); a cancellation then stops the send
    /// or the resolving that follows, and keeps what was adopted.
    public func sync(
        with remote: String, resolving registry: ResolverRegistry?, device: String? = nil,
        progress: (@Sendable (SyncTraffic) -> Void)? = nil
    ) async throws(TruceError) -> SyncReport {
        try await Self.onOwnThread { [self] (cancellation) throws(TruceError) in
            try sync(with: remote, resolving: registry, device: device, progress: progress, cancellation: cancellation)
        }
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

    /// Settles every document in conflict (or just `requested`), off the calling task's thread; cancelling the task
    /// stops it before any resolution is written.
    ///
    /// `progress` hears (documents decided, documents to decide).
    public func resolveAll(
        _ requested: [DocumentKey]? = nil, registry: ResolverRegistry, resolverName: String? = nil, device: String? = nil,
        progress: (@Sendable (_ done: Int, _ total: Int) -> Void)? = nil
    ) async throws(TruceError) -> [DocumentKey: ResolveResult] {
        try await Self.onOwnThread { [self] (cancellation) throws(TruceError) in
            try resolveAll(
                requested, registry: registry, resolverName: resolverName, device: device, cancellation: cancellation, progress: progress)
        }
    }
}
