import Foundation
import Synchronization
internal import TruceGit
internal import TruceSaveLog

/// One repository handle, and the work the store does with it: what sessions are made of.
///
/// Only sessions and the use cases over them reach an engine (`StoreAccess`
/// hands them out): a `ReadSession` reads through one, a `WriteSession`
/// writes through one, and every write goes through a `WriteSession`. An
/// engine is used by one thread at a time: the store's shared one under its
/// lock, or one a sync or a prune opens for itself so that nothing waits
/// behind a transfer or a repack. Two engines on one store are two writers,
/// which the store is built for (compare-and-swap references, lock files),
/// as two processes are.
final class StoreEngine {
    let repository: Repository
    /// The synced routing as last read, shared by every engine of one store.
    let routingCache: RoutingCache
    /// The save log's overlay, once a log was found or made (see `saveLogOverlay(forWriting:)`).
    private var overlay: SaveLogOverlay?
    /// True while a checkpoint waits on its timer.
    var checkpointScheduled = false
    /// True once this engine saved through the save log: what it saved lands when its store is released.
    var hasLoggedSaves = false

    init(repository: Repository, routingCache: RoutingCache = RoutingCache()) {
        self.repository = repository
        self.routingCache = routingCache
    }

    var instrumentation: Instrumentation { repository.instrumentation }
    /// The store directory, with a trailing slash.
    var gitDirectory: String { repository.gitDirectory }

    /// A read session of the store as it is now: through the save log's overlay when the log holds saves git does not.
    ///
    /// Reading the log takes no lock and writes nothing: a store that can only be read serves its logged saves too.
    func readSession() throws -> ReadSession {
        if let overlay = try saveLogOverlay(forWriting: false) {
            try overlay.refresh()
            if overlay.holdsSaves { return ReadSession(engine: try overlay.reader, overlay: overlay) }
        }
        return ReadSession(engine: self)
    }

    /// The save log's overlay; nil when the store has no log and `forWriting` is false. For writing, the log is
    /// made when missing and opened for appends.
    func saveLogOverlay(forWriting: Bool) throws -> SaveLogOverlay? {
        if let overlay {
            if forWriting { try overlay.openForWriting() }
            return overlay
        }
        let path = gitDirectory + SaveLogOverlay.fileName
        guard let log = forWriting ? try SaveLog(path: path) : try SaveLog.openForReading(at: path) else { return nil }
        overlay = SaveLogOverlay(gitDirectory: gitDirectory, log: log, instrumentation: instrumentation)
        return overlay
    }

    /// Lands what the save log holds in git, when there is a log and (unless `evenWhenEmpty`) it holds anything, and
    /// forgets the overlay's saves; returns the changes that landed. Only writers call it.
    func landSaveLog(evenWhenEmpty: Bool = false) throws -> [Change] {
        guard let overlay = try saveLogOverlay(forWriting: false), try evenWhenEmpty || overlay.log.mayHaveRecords() else { return [] }
        try overlay.openForWriting()
        let landed = try land(overlay.log)
        try overlay.clear()
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
        try StoreCreation.giveHeadABranch(in: repository)
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
