import Foundation
import Synchronization
internal import TruceGit

/// A store of documents and all their versions: a bare git repository that plain `git` can read.
///
/// Safe to share between tasks and threads: each operation takes the shared
/// repository handle in turn, except a sync and a prune, which open one of
/// their own so that nothing waits behind a network transfer or a repack.
/// Several processes may write the same store at once; reference updates are
/// compare-and-swap, so no acknowledged version is lost.
public final class DocumentStore: Sendable {
    /// The store directory.
    public let path: String
    /// The device a call that names none saves, resolves and syncs as: the one given at open, already validated.
    ///
    /// nil when none was given: such calls then use `DocumentStore.fallbackDevice`.
    public let device: String?
    private let shared: Mutex<SharedHandle>
    /// True when saves go through the store's save log (`truce.saveLog` in its config), read at open.
    public let savesThroughLog: Bool
    let eventHub = EventHub()
    /// The synced routing as last read, with the routing documents' current versions it was read from.
    let routingCache = Mutex<(versions: [VersionID?], routing: Routing)?>(nil)

    /// The marker that tells a Truce store from any other bare repository.
    static let formatConfigName = "truce.version"
    /// The config that makes saves go through the save log (lowercased, as git names it).
    static let saveLogConfigName = "truce.savelog"

    /// The device of a call that names none on a store opened without one: `$TRUCE_DEVICE`, then the host name, as the CLI does.
    public static var fallbackDevice: String {
        ProcessInfo.processInfo.environment["TRUCE_DEVICE"] ?? ProcessInfo.processInfo.hostName
    }

    /// The author name for a call's `device`: the one given, else the store's, else `fallbackDevice`; validated.
    ///
    /// The one rule every public method that takes `device: String? = nil` follows.
    func author(_ given: String?) throws(TruceError) -> String {
        if let given { return try Self.authorName(given) }
        if let device { return device }
        return try Self.authorName(Self.fallbackDevice)
    }

    /// Opens the store at `url`, creating it when the directory is missing or empty; saves without `device:` are by `device`.
    ///
    /// A directory that holds anything but a Truce store is an error, as for
    /// `open(at:)`: nothing is created in it.
    public convenience init(at url: URL, device: String) async throws(TruceError) {
        let path = url.path
        let device = try Self.authorName(device)
        if (try? FileManager.default.contentsOfDirectory(atPath: path))?.isEmpty ?? !FileManager.default.fileExists(atPath: path) {
            do { _ = try Self.create(at: path) } catch .storeExists {
                // Another writer created it meanwhile: open theirs.
            }
        }
        try self.init(opening: path, device: device)
    }

    /// Creates a store in a new or empty directory, with the config every store has (reflogs for all refs, fsynced objects, a replica id).
    ///
    /// Calls that name no device use `device` (validated here), else `fallbackDevice`.
    /// With `saveLog`, saves go through the store's save log (see `savesThroughLog`): durable at one data sync, and in
    /// git from the next checkpoint.
    public static func create(at path: String, device: String? = nil, saveLog: Bool = false) throws(TruceError) -> DocumentStore {
        let device = try device.map { name throws(TruceError) in try authorName(name) }
        let manager = FileManager.default
        if let contents = try? manager.contentsOfDirectory(atPath: path), !contents.isEmpty { throw .storeExists(path) }
        if manager.fileExists(atPath: path), (try? manager.contentsOfDirectory(atPath: path)) == nil { throw .storeExists(path) }
        do {
            let repository = try Repository.createBare(at: path)
            // Every ref update is audited in the reflog; bare repositories keep none by default.
            try repository.setConfig("core.logAllRefUpdates", to: "always")
            // Acknowledged saves must survive power loss, git's writes into the store too.
            try DurabilityConfig.write(in: repository)
            // Names this replica's manifest on the hubs it syncs with.
            try repository.setConfig(replicaConfigName, to: newReplicaID())
            try writeAttributesTemplate(in: repository.gitDirectory)
            // Now rather than at the first sync, so that a sync that adopts nothing leaves the store as it was.
            try SyncLock.prepare(in: repository)
            if saveLog { try repository.setConfig("truce.saveLog", to: "true") }
            // Written last: a store whose creation was interrupted is not mistaken for a whole one.
            try repository.setConfig(formatConfigName, to: "1")
        } catch let error as GitError {
            throw .storeFailure(error)
        } catch {
            throw .storeFailure(TruceError.StoreFailure(operation: "create store at \(path)", message: error.localizedDescription))
        }
        return try open(at: path, device: device)
    }

    /// Opens an existing store; fails when `path` is missing or is not a Truce store.
    ///
    /// Calls that name no device use `device` (validated here), else `fallbackDevice`.
    public static func open(at path: String, device: String? = nil) throws(TruceError) -> DocumentStore {
        try DocumentStore(opening: path, device: device)
    }

    private init(opening path: String, device: String?) throws(TruceError) {
        let device = try device.map { name throws(TruceError) in try Self.authorName(name) }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { throw .storeNotFound(path) }
        guard isDirectory.boolValue else { throw .notAStore(path, reason: "it is a file") }
        let repository: Repository
        let entries: [ConfigEntry]
        do {
            repository = try Repository.openBare(at: path)
            entries = try repository.configEntries()
        } catch  where error.isConfigurationError {
            throw .invalidConfiguration(error.message)
        } catch {
            throw .notAStore(path, reason: error.message)
        }
        guard entries.contains(where: { $0.isLocal && $0.name == Self.formatConfigName }) else {
            throw .notAStore(path, reason: "it is a git repository without '\(Self.formatConfigName)' in its config")
        }
        DurabilityConfig.upgrade(repository, entries: entries)
        // The last one wins, as in git; a value git would not read as a boolean is refused, not taken for false.
        let saveLog = entries.last { $0.isLocal && $0.name == Self.saveLogConfigName }
        if let saveLog, saveLog.boolValue == nil {
            throw .invalidConfiguration("truce.saveLog is '\(saveLog.value)', which is not a boolean (true or false)")
        }
        self.path = path
        self.device = device
        savesThroughLog = saveLog?.boolValue ?? false
        shared = Mutex(SharedHandle(repository: repository))
    }

    deinit {
        // What this store left in the save log lands in git now rather than at the next open.
        try? withRepository { _ in }
    }

    /// Runs `body` with exclusive use of the repository handle, turning libgit2 failures into `TruceError.storeFailure`.
    ///
    /// Saves waiting in the save log land in git first (a checkpoint), so that
    /// every operation but a logged save reads and writes git alone.
    func withRepository<Result: Sendable>(_ body: (Repository) throws -> Result) throws(TruceError) -> Result {
        var landed = false
        let result = try Self.asTruceErrors {
            try shared.withLock { shared throws -> Result in
                landed = try shared.checkpoint()
                return try body(shared.repository)
            }
        }
        // Outside the lock: delivering reads the journal through `withRepository`.
        if landed { deliverEvents() }
        return result
    }

    /// Runs `body` with the save log's pending saves, read up to date, under the shared handle's lock; nil when saves do
    /// not go through the log. Schedules the checkpoint that lands them in git.
    func withPendingSaves<Result: Sendable>(_ body: (PendingSaves) throws -> Result) throws(TruceError) -> Result? {
        guard savesThroughLog else { return nil }
        let (result, queued, log, schedule) = try Self.asTruceErrors {
            try shared.withLock { shared throws -> (Result, [SaveLog.Ticket], SaveLog, Bool) in
                let pending = try shared.pendingSaves(creatingLog: true)!
                try pending.refresh()
                // After a queued record failed, land what the log holds and start again from git, even when it holds
                // nothing: that ends the log's refusal of appends.
                if pending.isInvalid || pending.pendingRecords >= PendingSaves.checkpointRecords
                    || pending.pendingBytes >= PendingSaves.checkpointBytes
                {
                    _ = try shared.checkpoint(evenWhenEmpty: pending.isInvalid)
                }
                let result: Result
                do { result = try body(pending) } catch {
                    _ = pending.takeQueued()
                    throw error
                }
                let schedule = !shared.checkpointScheduled
                shared.checkpointScheduled = true
                return (result, pending.takeQueued(), pending.log, schedule)
            }
        }
        if schedule { scheduleCheckpoint() }
        // Outside the lock: the saves that queue meanwhile share this sync (group commit).
        do {
            for ticket in queued { _ = try log.wait(for: ticket) }
        } catch {
            try? shared.withLock { shared in try shared.pendingSaves(creatingLog: false)?.invalidate() }
            if let error = error as? GitError { throw .storeFailure(error) }
            throw .storeFailure(TruceError.StoreFailure(operation: "save to the save log", message: "\(error)"))
        }
        return result
    }

    /// Lands every save waiting in the save log in git now, and delivers their events.
    ///
    /// A store that saves through the log does this by itself a second after
    /// a save, before any other operation, and when it is released; call it
    /// before reading the store with plain `git` right after a save.
    public func checkpoint() throws(TruceError) {
        try withRepository { _ in }
    }

    /// A checkpoint a second from now: saves made meanwhile land with it.
    private func scheduleCheckpoint() {
        DispatchQueue.global().asyncAfter(deadline: .now() + PendingSaves.checkpointDelay) { [weak self] in
            guard let self else { return }
            self.shared.withLock { $0.checkpointScheduled = false }
            try? self.checkpoint()
        }
    }

    /// Runs `body`, with libgit2's failures and any other error as `TruceError.storeFailure`.
    private static func asTruceErrors<Result>(_ body: () throws -> Result) throws(TruceError) -> Result {
        do {
            return try body()
        } catch let error as TruceError {
            throw error
        } catch let error as GitError {
            throw .storeFailure(error)
        } catch {
            throw .storeFailure(TruceError.StoreFailure(operation: "store operation", message: "\(error)"))
        }
    }

    /// Runs `body` with a repository handle of its own, without taking the shared one: for work that waits on the
    /// network or rewrites packs (sync, prune), so that the store's other calls do not wait behind it.
    ///
    /// Two handles on one store are two writers, which the store is built
    /// for (compare-and-swap references, lock files), as two processes are.
    /// The work the handle counts is added to the shared handle's counters.
    func withOwnRepository<Result: Sendable>(_ body: (Repository) throws -> Result) throws(TruceError) -> Result {
        // The own handle reads git alone: what the save log holds lands first.
        try checkpoint()
        let own: Repository
        do { own = try Repository.openBare(at: path) } catch { throw .storeFailure(error) }
        defer {
            let (listed, read, records) = (own.referencesListed, own.commitsRead, own.packedRecordsRead)
            try? withRepository { shared in
                shared.referencesListed += listed
                shared.commitsRead += read
                shared.packedRecordsRead += records
            }
        }
        return try Self.asTruceErrors { try body(own) }
    }

    /// References listed through this store so far (for tests that count work).
    var referencesListed: Int { (try? withRepository { $0.referencesListed }) ?? 0 }
    /// Commits read through this store so far (for tests that count work).
    var commitsRead: Int { (try? withRepository { $0.commitsRead }) ?? 0 }
    /// Lines of `packed-refs` looked at through this store so far (for tests that count work).
    var packedRecordsRead: Int { (try? withRepository { $0.packedRecordsRead }) ?? 0 }

    private static func writeAttributesTemplate(in gitDirectory: String) throws {
        let info = URL(fileURLWithPath: gitDirectory).appendingPathComponent("info")
        try FileManager.default.createDirectory(at: info, withIntermediateDirectories: true)
        let text = """
            # Which resolver settles a conflict, in gitattributes syntax; for example:
            #   *.md   merge=three-way
            #   *.png  merge=overwrite-with-current
            # `git check-attr merge -- KEY` run in this store agrees with Truce.

            """
        try Data(text.utf8).write(to: info.appendingPathComponent("attributes"), options: .atomic)
    }
}

/// The store's shared repository handle, and what it knows of the save log.
final class SharedHandle {
    let repository: Repository
    /// The save log's pending saves, once a log was found or made.
    private var pending: PendingSaves?
    /// True while a checkpoint waits on its timer.
    var checkpointScheduled = false

    init(repository: Repository) { self.repository = repository }

    /// The save log's state; nil when there is no log and `creatingLog` is false.
    func pendingSaves(creatingLog: Bool) throws -> PendingSaves? {
        if let pending { return pending }
        let gitDirectory = repository.gitDirectory
        let log = creatingLog ? try SaveLog(path: gitDirectory + PendingSaves.fileName) : try PendingSaves.existingLog(in: gitDirectory)
        pending = try log.map { try PendingSaves(gitDirectory: gitDirectory, log: $0) }
        return pending
    }

    /// Lands what the save log holds in git, when there is a log and (unless `evenWhenEmpty`) it holds anything, and
    /// forgets the pending saves; returns whether a change landed.
    func checkpoint(evenWhenEmpty: Bool = false) throws -> Bool {
        guard let pending = try pendingSaves(creatingLog: false), try evenWhenEmpty || pending.log.mayHaveRecords() else { return false }
        let landed = try DocumentStore.checkpoint(pending.log, in: repository)
        try pending.clear()
        return landed
    }
}
