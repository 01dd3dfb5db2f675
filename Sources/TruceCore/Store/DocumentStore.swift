import Foundation
import Synchronization
internal import TruceGit
internal import TruceSaveLog

/// A store of documents and all their versions: a bare git repository that plain `git` can read.
///
/// `DocumentStore` is the facade an app calls; each method takes the
/// store's lock (or, for long work, hops to the store's executor), asks the
/// engine underneath to do the work, and delivers the events. It is safe to
/// share between tasks and threads. Several processes may write the same store
/// at once; reference updates are compare-and-swap, so no acknowledged version
/// is lost.
///
/// See <doc:Concurrency> for which calls are synchronous and which are `async`.
public final class DocumentStore: Sendable {
    /// The store directory.
    public let path: String
    /// The device a call that names none saves, resolves and syncs as: the one given at open, already validated.
    ///
    /// nil when none was given: such calls then use the host name (`defaultDevice`).
    public let device: String?
    /// The resolvers the store's config may name, given at open; every resolving call may pass another registry.
    public let resolvers: ResolverRegistry
    /// True when saves go through the store's save log (`truce.saveLog`, on unless set to false), read at open.
    public let savesThroughLog: Bool
    /// The engine on the shared repository handle.
    private let shared: Mutex<StoreEngine>
    let eventHub = EventHub()
    /// The synced routing as last read, shared by every engine of this store object.
    private let routingCache = RoutingCache()
    /// The counters and fault points tests watch.
    package let instrumentation: StoreInstrumentation

    /// Opens a store for the package's own tools and tests: `savesThroughLog` overrides the store's config for this
    /// object (nil keeps it), and `instrumentation` is what tests watch and steer.
    package static func open(
        at path: String, device: String? = nil, resolvers: ResolverRegistry = ResolverRegistry(), savesThroughLog: Bool? = nil,
        instrumentation: StoreInstrumentation
    ) throws(TruceError) -> DocumentStore {
        try DocumentStore(opening: path, device: device, resolvers: resolvers, savesThroughLog: savesThroughLog, instrumentation: instrumentation)
    }

    init(
        opening path: String, device: String?, resolvers: ResolverRegistry, savesThroughLog: Bool?, instrumentation: StoreInstrumentation
    ) throws(TruceError) {
        let device = try device.map { name throws(TruceError) in try DeviceName.validated(name) }
        let (engine, configured) = try StoreEngine.open(at: path, instrumentation: instrumentation.counters, routingCache: routingCache)
        self.path = path
        self.device = device
        self.resolvers = resolvers
        self.savesThroughLog = savesThroughLog ?? configured
        self.instrumentation = instrumentation
        shared = Mutex(engine)
    }

    deinit {
        // What this store left in the save log lands in git now rather than at the next open.
        try? withEngine { _ in }
    }

    /// The device of a call that names none, on a store opened without one: this machine's host name.
    ///
    /// The library reads no environment variable; the `truce` command line
    /// passes `$TRUCE_DEVICE` as the device when it is set.
    public static var defaultDevice: String { ProcessInfo.processInfo.hostName }

    /// The author name for a call's `device`: the one given, else the store's, else `defaultDevice`; validated.
    ///
    /// The one rule every public method that takes `device: String? = nil` follows.
    func author(_ given: String?) throws(TruceError) -> String {
        if let given { return try DeviceName.validated(given) }
        if let device { return device }
        return try DeviceName.validated(Self.defaultDevice)
    }

    /// Runs `body` with exclusive use of the shared engine, turning libgit2 failures into `TruceError.storeFailure`.
    ///
    /// Saves waiting in the save log land in git first (a checkpoint), so
    /// that every operation but a logged save reads and writes git alone, and
    /// their events are delivered after. The events' own reads of the journal
    /// pass `landingSaveLog: false`: the watcher wakes on the log's writes,
    /// and landing them there would checkpoint after every save.
    func withEngine<Result: Sendable>(landingSaveLog: Bool = true, _ body: (StoreEngine) throws -> Result) throws(TruceError) -> Result {
        var landed: [Change] = []
        let result = try Self.asTruceErrors {
            try shared.withLock { engine throws -> Result in
                if landingSaveLog { landed = try engine.landSaveLog() }
                return try body(engine)
            }
        }
        // Outside the lock: delivering reads the journal through `withEngine`.
        if !landed.isEmpty { deliverEvents() }
        return result
    }

    /// Runs `body` with an engine on a repository handle of its own, without taking the shared one: for work that
    /// waits on the network or rewrites packs (sync, prune), so that the store's other calls do not wait behind it.
    func withOwnEngine<Result: Sendable>(_ body: (StoreEngine) throws -> Result) throws(TruceError) -> Result {
        // The own handle reads git alone: what the save log holds lands first.
        try checkpoint()
        return try Self.asTruceErrors {
            try body(
                StoreEngine(repository: try Repository.openBare(at: path, instrumentation: instrumentation.counters), routingCache: routingCache))
        }
    }

    /// Runs `body` with the save log's pending saves, read up to date, under the shared engine's lock; nil when saves
    /// do not go through the log. Schedules the checkpoint that lands them in git.
    func withPendingSaves<Result: Sendable>(_ body: (SaveLogOverlay) throws -> Result) throws(TruceError) -> Result? {
        guard savesThroughLog else { return nil }
        let (result, queued, log, schedule) = try Self.asTruceErrors {
            try shared.withLock { engine throws -> (Result, [SaveLog.Ticket], SaveLog, Bool) in
                let pending = try engine.pendingSaves(creatingLog: true)!
                try pending.refresh()
                // After a queued record failed, land what the log holds and start again from git, even when it holds
                // nothing: that ends the log's refusal of appends.
                if pending.isInvalid || pending.pendingRecords >= SaveLogOverlay.checkpointRecords
                    || pending.pendingBytes >= SaveLogOverlay.checkpointBytes
                {
                    _ = try engine.landSaveLog(evenWhenEmpty: pending.isInvalid)
                }
                let result: Result
                do { result = try body(pending) } catch {
                    _ = pending.takeQueued()
                    throw error
                }
                let schedule = !engine.checkpointScheduled
                engine.checkpointScheduled = true
                return (result, pending.takeQueued(), pending.log, schedule)
            }
        }
        if schedule { scheduleCheckpoint() }
        // Outside the lock: the saves that queue meanwhile share this sync (group commit).
        do {
            for ticket in queued { _ = try log.wait(for: ticket) }
        } catch {
            try? shared.withLock { engine in try engine.pendingSaves(creatingLog: false)?.invalidate() }
            if let error = error as? SaveLogError { throw .storeFailure(error) }
            throw .storeFailure(TruceError.StoreFailure(operation: "save to the save log", message: "\(error)"))
        }
        return result
    }

    /// A checkpoint a second from now: saves made meanwhile land with it.
    private func scheduleCheckpoint() {
        BlockingExecutor.after(SaveLogOverlay.checkpointDelay) { [weak self] in
            guard let self else { return }
            self.shared.withLock { $0.checkpointScheduled = false }
            try? self.checkpoint()
        }
    }

    /// Runs `body` on a new transaction over the shared engine, which stages the write and commits it, then delivers
    /// the events.
    func transacting<T: Sendable>(_ objects: WriteTransaction.Objects, _ body: (inout WriteTransaction) throws -> T) throws(TruceError) -> T {
        let value = try withEngine { engine in
            var transaction = try WriteTransaction(in: engine, objects: objects)
            return try body(&transaction)
        }
        deliverEvents()
        return value
    }

    /// Runs `body`, with libgit2's failures and any other error as `TruceError.storeFailure`.
    static func asTruceErrors<Result>(_ body: () throws -> Result) throws(TruceError) -> Result {
        do {
            return try body()
        } catch let error as TruceError {
            throw error
        } catch let error as GitError {
            throw .storeFailure(error)
        } catch let error as SaveLogError {
            throw .storeFailure(error)
        } catch {
            throw .storeFailure(TruceError.StoreFailure(operation: "store operation", message: "\(error)"))
        }
    }
}
