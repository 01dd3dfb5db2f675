import Foundation
import Synchronization
internal import TruceGit
internal import TruceSaveLog

/// The engine under `DocumentStore`: one repository handle, and all the work the store does with it.
///
/// The facade takes its lock (or hops to the `BlockingExecutor`), calls one
/// method here and delivers the events; only the engine touches the
/// repository, and every write goes through `WriteTransaction`. An engine is
/// used by one thread at a time: the store's shared one under its lock, or
/// one a sync or a prune opens for itself so that nothing waits behind a
/// transfer or a repack. Two engines on one store are two writers, which the
/// store is built for (compare-and-swap references, lock files), as two
/// processes are.
final class StoreEngine {
    let repository: Repository
    /// The synced routing as last read, shared by every engine of one store object.
    let routingCache: RoutingCache
    /// The save log's pending saves, once a log was found or made (see `pendingSaves(creatingLog:)`).
    private var pending: SaveLogOverlay?
    /// True while a checkpoint waits on its timer.
    var checkpointScheduled = false

    init(repository: Repository, routingCache: RoutingCache = RoutingCache()) {
        self.repository = repository
        self.routingCache = routingCache
    }

    var instrumentation: Instrumentation { repository.instrumentation }
    /// The store directory, with a trailing slash.
    var gitDirectory: String { repository.gitDirectory }

    /// The save log's state; nil when there is no log and `creatingLog` is false.
    func pendingSaves(creatingLog: Bool) throws -> SaveLogOverlay? {
        if let pending { return pending }
        let log = creatingLog ? try SaveLog(path: gitDirectory + SaveLogOverlay.fileName) : try SaveLogOverlay.existingLog(in: gitDirectory)
        pending = try log.map { try SaveLogOverlay(gitDirectory: gitDirectory, log: $0, instrumentation: instrumentation) }
        return pending
    }

    /// Lands what the save log holds in git, when there is a log and (unless `evenWhenEmpty`) it holds anything, and
    /// forgets the pending saves; returns the changes that landed.
    func landSaveLog(evenWhenEmpty: Bool = false) throws -> [Change] {
        guard let pending = try pendingSaves(creatingLog: false), try evenWhenEmpty || pending.log.mayHaveRecords() else { return [] }
        let landed = try land(pending.log)
        try pending.clear()
        return landed
    }
}

/// The synced routing documents' current versions as last read, and the routing parsed from them.
final class RoutingCache: Sendable {
    private let cached = Mutex<(versions: [VersionID?], routing: Routing)?>(nil)

    /// The routing read from `versions`, when that is what was read last.
    func routing(for versions: [VersionID?]) -> Routing? {
        cached.withLock { cached in cached.flatMap { $0.versions == versions ? $0.routing : nil } }
    }

    func keep(_ routing: Routing, for versions: [VersionID?]) { cached.withLock { $0 = (versions, routing) } }
}

extension StoreEngine {
    /// The marker that tells a Truce store from any other bare repository.
    static let formatConfigName = "truce.version"
    /// The config that makes saves go through the save log (lowercased, as git names it); on when absent.
    static let saveLogConfigName = "truce.savelog"

    /// Makes a store in `path`, a new or empty directory, with the config every store has: reflogs for all refs,
    /// fsynced objects, a replica id, and the save log off when `saveLog` is false.
    ///
    /// A creation that fails (a full disk) removes what it made; one that was killed or cut by a power loss is
    /// started again here (see `StoreCreation`).
    static func create(at path: String, saveLog: Bool) throws(TruceError) {
        let manager = FileManager.default
        if StoreCreation.isInterrupted(at: path) {
            do { try StoreCreation.clear(path) } catch { throw .storeFailure(.init(operation: "clear \(path)", message: "\(error)")) }
        }
        if let contents = try? manager.contentsOfDirectory(atPath: path), !contents.isEmpty { throw .storeExists(path) }
        if manager.fileExists(atPath: path), (try? manager.contentsOfDirectory(atPath: path)) == nil { throw .storeExists(path) }
        do {
            try StoreCreation.creating(at: path) { try makeStore(at: path, saveLog: saveLog) }
        } catch let error as GitError {
            throw .storeFailure(error)
        } catch {
            throw .storeFailure(TruceError.StoreFailure(operation: "create store at \(path)", message: error.localizedDescription))
        }
    }

    /// Writes a new store's repository and config at `path` (see `create`).
    private static func makeStore(at path: String, saveLog: Bool) throws {
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
        if !saveLog { try repository.setConfig("truce.saveLog", to: "false") }
        // Written last, once the rest is durable: a store whose creation was interrupted is not mistaken for a whole one.
        try StoreCreation.syncTree(path)
        try repository.setConfig(formatConfigName, to: "1")
    }

    /// Opens the store at `path`, and reads whether its saves go through the save log; fails when `path` is missing or
    /// is not a Truce store.
    static func open(
        at path: String, instrumentation: Instrumentation, routingCache: RoutingCache
    ) throws(TruceError) -> (engine: StoreEngine, savesThroughLog: Bool) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { throw .storeNotFound(path) }
        guard isDirectory.boolValue else { throw .notAStore(path, reason: "it is a file") }
        let repository: Repository
        let entries: [ConfigEntry]
        do {
            repository = try Repository.openBare(at: path, instrumentation: instrumentation)
            entries = try repository.configEntries()
        } catch  where error.isConfigurationError {
            throw .invalidConfiguration(error.message)
        } catch {
            throw .notAStore(path, reason: error.message)
        }
        guard entries.contains(where: { $0.isLocal && $0.name == formatConfigName }) else {
            if StoreCreation.isInterrupted(at: path) {
                throw .notAStore(path, reason: "its creation was interrupted; run 'truce init' again to make it")
            }
            throw .notAStore(path, reason: "it is a git repository without '\(formatConfigName)' in its config")
        }
        DurabilityConfig.upgrade(repository, entries: entries)
        // The last one wins, as in git; a value git would not read as a boolean is refused, not taken for false.
        let saveLog = entries.last { $0.isLocal && $0.name == saveLogConfigName }
        if let saveLog, saveLog.boolValue == nil {
            throw .invalidConfiguration("truce.saveLog is '\(saveLog.value)', which is not a boolean (true or false)")
        }
        return (StoreEngine(repository: repository, routingCache: routingCache), saveLog?.boolValue ?? true)
    }

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
