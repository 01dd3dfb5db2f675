import Foundation
import Synchronization
internal import TruceGit
internal import TruceSaveLog

/// The one way into a store: read sessions and write sessions on its shared repository handle, and engines of their
/// own for long work.
///
/// Every call of `DocumentStore` and of the use cases under it (resolving,
/// routing, import and export, restore, a person's sessions, recorded
/// answers, sync) reaches the store through one of these:
///
/// - `read` gives a `ReadSession`: a view of the store at one moment, which
///   lists a document's heads once and keeps them. Saves still in the save
///   log are served from the log (the session then reads through the log's
///   overlay), so reading never writes: a store that can only be read (its
///   permissions, a read-only mount, a full disk) reads as well as any.
/// - `write` gives a `WriteSession`, the only mutation path. A writer first
///   lands what the save log holds in git, so that the session reads and
///   writes git alone, and the events go out when it returns.
/// - `save` writes one version, through the save log when the store has it
///   on and the content is small, else as a write session.
/// - `withOwnEngine` gives a long operation (sync, prune) a repository handle
///   of its own, so that reads and saves meanwhile do not wait behind it.
///
/// The shared engine is used under a lock, for milliseconds; the long work
/// runs on the `BlockingExecutor`. Nothing here knows the facade.
final class StoreAccess: Sendable {
    /// The store directory, as given at open.
    let path: String
    /// True when small saves go through the save log (`truce.saveLog`, on unless set to false, or the opener's choice).
    let savesThroughLog: Bool
    /// The counters and fault points tests watch.
    let instrumentation: Instrumentation
    /// The synced routing as last read, shared by every engine of this store.
    let routingCache = RoutingCache()
    /// The events of this store's `events` sequences.
    let eventHub = EventHub()
    /// The engine on the shared repository handle.
    private let shared: Mutex<StoreEngine>

    /// Opens the store at `path`; `savesThroughLog` overrides the store's config (nil keeps it).
    init(opening path: String, savesThroughLog: Bool?, instrumentation: Instrumentation) throws(TruceError) {
        let cache = routingCache
        let (engine, configured) = try StoreEngine.open(at: path, instrumentation: instrumentation, routingCache: cache)
        self.path = path
        self.savesThroughLog = savesThroughLog ?? configured
        self.instrumentation = instrumentation
        shared = Mutex(engine)
    }

    deinit {
        // What this store saved through the save log lands in git now rather than at the next writer; a store that
        // only read leaves the log to writers.
        if shared.withLock({ $0.checkpointScheduled || $0.hasLoggedSaves }) { try? landSaveLog() }
    }

    // MARK: - Sessions

    /// Runs `body` with a read session of the store as it is now: git, and the saves the save log holds that git does
    /// not yet; writes nothing.
    func read<Result: Sendable>(_ body: (ReadSession) throws -> Result) throws(TruceError) -> Result {
        try Self.asTruceErrors {
            try shared.withLock { engine in
                instrumentation.countSessionOpened()
                return try body(try engine.readSession())
            }
        }
    }

    /// Runs `body` with a write session over the shared engine, after landing what the save log holds; commits nothing
    /// by itself (the body commits), and delivers the events after.
    func write<Result: Sendable>(_ body: (inout WriteSession) throws -> Result) throws(TruceError) -> Result {
        let result = try Self.asTruceErrors {
            try shared.withLock { engine -> Result in
                instrumentation.countSessionOpened()
                _ = try engine.landSaveLog()
                var session = try WriteSession(in: engine, objects: .packed)
                return try body(&session)
            }
        }
        deliverEvents()
        return result
    }

    /// Runs `body` with an engine on a repository handle of its own, after landing what the save log holds: for work
    /// that waits on the network or rewrites packs (sync, prune), so that the store's other calls do not wait behind it.
    func withOwnEngine<Result: Sendable>(_ body: (StoreEngine) throws -> Result) throws(TruceError) -> Result {
        try landSaveLog()
        return try Self.asTruceErrors {
            try body(StoreEngine(repository: try Repository.openBare(at: path, instrumentation: instrumentation), routingCache: routingCache))
        }
    }

    /// Lands every save the save log holds in git now (the store's checkpoint), and delivers their events.
    func landSaveLog() throws(TruceError) {
        let landed = try Self.asTruceErrors { try shared.withLock { engine in try engine.landSaveLog() } }
        if !landed.isEmpty { deliverEvents() }
    }

    // MARK: - One save

    /// Writes `content` (nil: a deletion) as a new version of `key`: through the save log when the store has it on and
    /// the content is small (large content would sit whole in the log's memory), else straight into git.
    ///
    /// `date` must be one a commit can hold, and not more than a day ahead of this clock unless `allowingFutureDate`.
    func save(
        _ content: Data?, to key: DocumentKey, base: VersionID?, author: String, date: Date, allowingFutureDate: Bool = false,
        restoring: RestoredDrop? = nil
    ) throws(TruceError) -> SaveResult {
        try Signature.checkRepresentable(date)
        try HybridDates.checkNotFarAhead(date, allowing: allowingFutureDate)
        if savesThroughLog, restoring == nil, (content?.count ?? 0) <= SaveLogOverlay.largestLoggedContent {
            let logged = try logging { overlay in
                var session = try WriteSession(logging: overlay)
                return try session.save(content, to: key, base: base, author: author, date: date)
            }
            // The journal records a logged save only when it lands: its event goes out now, and not again then.
            eventHub.deliverEarly(logged.event)
            return logged.result
        }
        return try write { session in
            try session.save(content, to: key, base: base, author: author, date: date, restoring: restoring).result
        }
    }

    /// Saves many versions as one pack, the way `git fast-import` does, each by its own device or `author`; returns the
    /// new version ids in the order of `saves`. Bad input is refused before anything is written.
    func saveBatch(
        _ saves: [BatchSave], author: String, allowingFutureDates: Bool, cancellation: Cancellation?,
        progress: (@Sendable (_ done: Int, _ total: Int) -> Void)?
    ) throws(TruceError) -> [VersionID] {
        guard !saves.isEmpty else { return [] }
        let authors = try saves.map { save throws(TruceError) in try save.device.map(DeviceName.validated) ?? author }
        let now = Date()
        for save in saves {
            try Signature.checkRepresentable(save.date)
            try HybridDates.checkNotFarAhead(save.date, now: now, allowing: allowingFutureDates)
            if let committed = save.committerDate { try Signature.checkRepresentable(committed) }
        }
        return try write { session in
            try session.saveBatch(saves, authors: authors, cancellation: cancellation, progress: progress)
        }
    }

    /// Runs `body` with the save log's overlay, read up to date, under the shared engine's lock, then waits for what it
    /// queued to be durable; schedules the checkpoint that lands it in git.
    private func logging<Result: Sendable>(_ body: (SaveLogOverlay) throws -> Result) throws(TruceError) -> Result {
        let (result, queued, log, schedule) = try Self.asTruceErrors {
            try shared.withLock { engine throws -> (Result, [SaveLog.Ticket], SaveLog, Bool) in
                let overlay = try engine.saveLogOverlay(forWriting: true)!
                try overlay.refresh()
                // After a queued record failed, land what the log holds and start again from git, even when it holds
                // nothing: that ends the log's refusal of appends.
                if overlay.isInvalid || overlay.pendingRecords >= SaveLogOverlay.checkpointRecords
                    || overlay.pendingBytes >= SaveLogOverlay.checkpointBytes
                {
                    _ = try engine.landSaveLog(evenWhenEmpty: overlay.isInvalid)
                }
                let result: Result
                do { result = try body(overlay) } catch {
                    _ = overlay.takeQueued()
                    throw error
                }
                let schedule = !engine.checkpointScheduled
                engine.checkpointScheduled = true
                engine.hasLoggedSaves = true
                return (result, overlay.takeQueued(), overlay.log, schedule)
            }
        }
        if schedule { scheduleCheckpoint() }
        // Outside the lock: the saves that queue meanwhile share this sync (group commit).
        do {
            for ticket in queued { _ = try log.wait(for: ticket) }
        } catch {
            try? shared.withLock { engine in try engine.saveLogOverlay(forWriting: false)?.invalidate() }
            throw Self.truceError(error, operation: "save to the save log")
        }
        return result
    }

    /// A checkpoint a second from now: saves made meanwhile land with it.
    private func scheduleCheckpoint() {
        BlockingExecutor.after(SaveLogOverlay.checkpointDelay) { [weak self] in
            guard let self else { return }
            self.shared.withLock { $0.checkpointScheduled = false }
            try? self.landSaveLog()
        }
    }

    // MARK: - Events

    /// A new sequence of every change recorded after this call, from any writer.
    var events: AsyncStream<DocumentStateChange> { eventHub.subscribe(to: self) }

    /// Delivers this store's own changes to its `events` before the write returns, rather than on the watcher's next wake-up.
    func deliverEvents() { eventHub.deliver(from: self) }

    // MARK: - Errors

    /// Runs `body`, with libgit2's and the save log's failures, and any other error, as `TruceError.storeFailure`.
    static func asTruceErrors<Result>(_ body: () throws -> Result) throws(TruceError) -> Result {
        do {
            return try body()
        } catch {
            throw truceError(error, operation: "store operation")
        }
    }

    /// `error` as a `TruceError`: itself, or a store failure saying what failed underneath `operation`.
    static func truceError(_ error: any Error, operation: String) -> TruceError {
        switch error {
        case let error as TruceError: error
        case let error as GitError: .storeFailure(error)
        case let error as SaveLogError: .storeFailure(error)
        default: .storeFailure(TruceError.StoreFailure(operation: operation, message: "\(error)"))
        }
    }
}
