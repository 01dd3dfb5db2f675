import Foundation
internal import TruceGit
internal import TruceSaveLog

/// Writing versions: one save or deletion at a time, a batch, and the save log's checkpoint.
extension DocumentStore {
    /// Writes `content` as a new version of `key`; returns it with the document's state after the save.
    ///
    /// The new version's parent is `base`, or the current version when `base`
    /// is nil. When `base` is no longer a head because another writer saved
    /// meanwhile, the new version lands beside that writer's and the document
    /// is in conflict (`result.state == .inConflict`): neither is lost. The
    /// save is durable when this returns; with the save log on (the default)
    /// git sees it at the next checkpoint (see <doc:SavingAndTheSaveLog>).
    ///
    /// The version is dated `date` (to the second), or one second past the
    /// newest date the store has seen when that is later: its parents' and
    /// those of every version it adopted by sync (hybrid logical dates, see
    /// <doc:Dates>), so a version is never dated before its parents. A `date`
    /// more than a day ahead of this device's clock is refused
    /// (`TruceError.dateTooFarAhead`) unless `allowingFutureDate`.
    @discardableResult
    public func save(
        _ content: Data, to key: DocumentKey, device: String? = nil, base: VersionID? = nil, date: Date = Date(),
        allowingFutureDate: Bool = false
    ) throws(TruceError) -> SaveResult {
        try access.save(content, to: key, base: base, author: author(device), date: date, allowingFutureDate: allowingFutureDate)
    }

    /// Writes a deletion: a version whose tree lacks the key, dated as `save` dates a version.
    @discardableResult
    public func delete(
        _ key: DocumentKey, device: String? = nil, base: VersionID? = nil, date: Date = Date(), allowingFutureDate: Bool = false
    ) throws(TruceError) -> SaveResult {
        try access.save(nil, to: key, base: base, author: author(device), date: date, allowingFutureDate: allowingFutureDate)
    }

    /// Saves many versions as one pack, the way `git fast-import` does; cancelling the task stops it before any version lands.
    ///
    /// Saves of one key chain in the given order, the first on the key's
    /// current version, unless a save names its own `base` (which must be a
    /// version of that key): then it lands beside the others, as `save` does.
    /// Nothing is acknowledged until the pack is durable and every head is
    /// published; a version saved meanwhile by another writer stays a head
    /// beside the batch's (the document is then in conflict). `progress`
    /// hears (saves written to memory, saves in all). A cancelled batch throws
    /// `TruceError.cancelled` and leaves no head or journal entry behind; a
    /// batch too big to hold in memory (over 64 MiB of content, or about
    /// 30,000 saves) writes a pack each time memory fills, which a cancelled
    /// batch leaves unreferenced for `prune` to reclaim. Bad input (a `base`
    /// that is not a version of its key) is refused before anything is
    /// written. Returns the new version ids in the order of `saves`.
    ///
    /// Each version is dated as `save` dates one (never before its parents,
    /// nor before a version the store adopted by sync); a date more than a
    /// day ahead of this device's clock is refused unless `allowingFutureDates`.
    public func saveBatch(
        _ saves: [BatchSave], allowingFutureDates: Bool = false, progress: (@Sendable (_ done: Int, _ total: Int) -> Void)? = nil
    ) async throws(TruceError) -> [VersionID] {
        try await BlockingExecutor.run { [self] (cancellation) throws(TruceError) in
            try saveBatch(saves, allowingFutureDates: allowingFutureDates, cancellation: cancellation, progress: progress)
        }
    }

    /// `saveBatch` on the calling thread, for the package's own synchronous callers (a test fixture's store).
    package func saveBatchOnCallingThread(_ saves: [BatchSave], allowingFutureDates: Bool = false) throws(TruceError) -> [VersionID] {
        try saveBatch(saves, allowingFutureDates: allowingFutureDates, cancellation: nil)
    }

    /// `saveBatch` on the calling thread, stopping with `TruceError.cancelled` once `cancellation` is set.
    func saveBatch(
        _ saves: [BatchSave], allowingFutureDates: Bool = false, cancellation: Cancellation?,
        progress: (@Sendable (_ done: Int, _ total: Int) -> Void)? = nil
    ) throws(TruceError) -> [VersionID] {
        try access.saveBatch(
            saves, author: author(nil), allowingFutureDates: allowingFutureDates, cancellation: cancellation, progress: progress)
    }

    /// Lands every save waiting in the save log in git now, and delivers their events.
    ///
    /// A store that saves through the log does this by itself a second after
    /// a save, before any other operation, and when it is released; call it
    /// before reading the store with plain `git` right after a save.
    public func checkpoint() throws(TruceError) {
        try access.landSaveLog()
    }
}
