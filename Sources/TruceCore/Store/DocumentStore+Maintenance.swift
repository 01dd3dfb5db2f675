import Foundation

/// Keeping a store small.
extension DocumentStore {
    /// Reclaims the space of everything no ref, no resolution history and no reflog entry younger than `expire` needs,
    /// off the calling task's thread; cancelling the task stops it before the new pack is written.
    ///
    /// libgit2 has no gc, so prune does git's work itself: expire old reflog
    /// entries, mark every object reachable from a ref or a kept reflog entry,
    /// repack the marked set into one pack (fsynced), and only then delete
    /// loose objects it holds, unreachable ones older than the grace period,
    /// and the old packs: at once when the new pack holds all their objects
    /// (so prunes without writes keep the store's size flat), else once they
    /// are older than the grace period. A prune killed at any point leaves every object in a
    /// loose file or a pack. Heads, resolution history and the merge base of
    /// an open conflict are reachable from head refs, so they always stay.
    /// Like `git gc --prune=now`, `expire: 0` is safe only when no other
    /// process is writing: a save's objects are unreachable until its ref lands.
    ///
    /// What runs before the new pack is written changes no document: it
    /// clears stale locks, journals what a crash left out, drops superseded
    /// head refs and expires old reflog entries. A cancelled prune deletes no
    /// object. `progress` hears each step, for a progress line.
    @discardableResult
    public func prune(expire: TimeInterval = Expiry.defaultGrace, progress: (@Sendable (String) -> Void)? = nil) async throws(TruceError)
        -> PruneReport
    {
        try await BlockingExecutor.run { [access] (cancellation) throws(TruceError) in
            try access.prune(expire: expire, progress: progress, cancellation: cancellation)
        }
    }

    /// `prune` on the calling thread, not cancellable: for the benchmark, which times the work without the executor.
    package func pruneOnCallingThread(expire: TimeInterval) throws(TruceError) -> PruneReport {
        try access.prune(expire: expire, progress: nil, cancellation: nil)
    }
}
