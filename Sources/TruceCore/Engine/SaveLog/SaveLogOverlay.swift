import Foundation
internal import TruceGit
internal import TruceSaveLog

/// The saves a store's save log holds and git does not yet, laid over git: what this process reads of them, and how
/// it adds its own.
///
/// A save with the log on is durable once its record is synced in the log
/// (one `fdatasync`, shared by the saves queued meanwhile). Its objects stay
/// in the memory of `writer`, which reads the store and them alike; its head
/// is one of `pendingHeads`. Saves of other processes are read from the log
/// before each save and each read session, so a save that follows another's
/// acknowledgement builds on it, as with heads in git, and a reader sees it.
/// Reading the log writes nothing: the overlay opens it for reading until
/// this process saves or lands. Landing (`StoreEngine.land`) puts every
/// record in git through one `WriteSession` and starts the log's next
/// generation; this state is then dropped, here at once, and in other
/// processes when they next read the new generation.
final class SaveLogOverlay {
    /// The log's file in the store directory.
    static let fileName = "truce-saves.log"
    /// Content larger than this is saved straight into git: a log record holds it whole, in memory too, until the checkpoint.
    static let largestLoggedContent = 1 << 20
    /// A save checkpoints first when the log holds this many records or bytes, so that a checkpoint stays short.
    static let checkpointRecords = 4096
    static let checkpointBytes = 64 << 20
    /// How long after a save its checkpoint waits: saves made meanwhile land with it, in one pack and one journal entry.
    static let checkpointDelay: Duration = .seconds(1)

    /// The log, opened for reading until this process writes to it (`openForWriting`).
    private(set) var log: SaveLog
    private let gitDirectory: String
    private let instrumentation: Instrumentation
    private var staging: (writer: MemoryRepository, reader: StoreEngine)?
    private var cursor = SaveLog.Cursor()
    /// For each document with pending saves: its head candidates once they land (the store's heads, then each save's
    /// new version added and the versions it replaces removed).
    private var pendingHeads: [DocumentKey: [ObjectID]] = [:]
    /// The versions `versions(of:)` read from `pendingHeads`, until a save changes them. Only documents with pending
    /// saves: any other writer lands the log first, so their heads change only here.
    private var pendingVersions: [DocumentKey: DocumentVersions] = [:]
    /// The heads `versions(of:)` last read from git for a document without pending saves, for the save that follows
    /// under the same lock: its `adopt` starts from them rather than reading the directory again.
    private var lastRead: (key: DocumentKey, heads: [ObjectID])?
    /// The changes of the saves the overlay holds, in the log's order: what `changes(since:)` lists after the journal's.
    private(set) var pendingChanges: [Change] = []
    private(set) var pendingRecords = 0
    private(set) var pendingBytes = 0
    /// Names the records this reader queues: `refresh` reads past them, they were adopted when queued.
    let origin = UInt64.random(in: 1...UInt64.max)
    /// Records queued and not yet waited for (see `takeQueued`).
    private var queued: [SaveLog.Ticket] = []
    /// Set when a queued record failed: what this state adopted may be a save that is not in the log.
    private(set) var isInvalid = false

    init(gitDirectory: String, log: SaveLog, instrumentation: Instrumentation) {
        self.log = log
        self.gitDirectory = gitDirectory
        self.instrumentation = instrumentation
    }

    /// Reads the store and the pending saves' objects; new objects stay in its memory, which the log makes durable.
    /// A handle of its own, made when the overlay first holds a save.
    var writer: MemoryRepository {
        get throws { try stage().writer }
    }

    /// The engine over `writer`'s handle: reads see the store and the pending saves' objects alike.
    var reader: StoreEngine {
        get throws { try stage().reader }
    }

    private func stage() throws -> (writer: MemoryRepository, reader: StoreEngine) {
        if let staging { return staging }
        let writer = try MemoryRepository(path: gitDirectory, instrumentation: instrumentation)
        staging = (writer, StoreEngine(repository: writer.repository))
        return staging!
    }

    /// True when the log holds saves git does not have yet: reads then go through the overlay.
    var holdsSaves: Bool { !pendingHeads.isEmpty }

    /// The documents the log holds saves of.
    var pendingKeys: [DocumentKey] { Array(pendingHeads.keys) }

    /// Opens the log for appends and landing, when it was opened for reading: the first save or checkpoint of this
    /// process. The cursor stays where it was: the file is the same.
    func openForWriting() throws {
        guard !log.isWritable else { return }
        log = try SaveLog(path: log.path)
    }

    /// Reads the records appended since the last call (by this process or another), or all of them after a checkpoint.
    func refresh() throws {
        let (restarted, records) = try log.records(from: &cursor)
        // Another process's checkpoint landed what this state held. A record this process queued and had not yet
        // written when the log restarted is no longer adopted: a save based on its document meanwhile lands beside
        // it (a conflict, as between two processes), never without it.
        if restarted {
            let read = cursor
            try clear()
            cursor = read
        }
        lastRead = nil
        for record in records {
            pendingRecords += 1
            pendingBytes += record.payload.count
            if !restarted && LoggedSave.origin(of: record.payload) == origin { continue }
            guard let save = LoggedSave(decoding: record.payload) else { throw Self.unreadable(record.sequence, in: log) }
            try adopt(save)
        }
    }

    /// Forgets every pending save: they landed in git (a checkpoint), and the store's heads now show them.
    func clear() throws {
        pendingHeads.removeAll()
        pendingVersions.removeAll()
        pendingChanges.removeAll()
        lastRead = nil
        isInvalid = false
        (pendingRecords, pendingBytes) = (0, 0)
        cursor = SaveLog.Cursor()
        try staging?.writer.discard()
    }

    /// `key`'s versions with the pending saves landed.
    func versions(of key: DocumentKey) throws -> DocumentVersions {
        guard let candidates = pendingHeads[key] else {
            let heads = try reader.headReferences(of: key).map(\.target)
            lastRead = (key, heads)
            return try reader.documentVersions(of: key, amongCandidates: heads)
        }
        if let known = pendingVersions[key] { return known }
        let versions = try reader.documentVersions(of: key, amongCandidates: candidates)
        pendingVersions[key] = versions
        return versions
    }

    /// Queues `save` for the log and adopts it, so that the next save builds on it; `takeQueued` hands over what to
    /// wait for before acknowledging it. Its objects are in `writer` already.
    func enqueue(_ save: LoggedSave) throws {
        queued.append(try log.enqueue([save.encoded]))
        try adopt(save)
    }

    /// The records queued since the last call: their saves are durable once `SaveLog.wait(for:)` returns for each.
    func takeQueued() -> [SaveLog.Ticket] {
        defer { queued.removeAll() }
        return queued
    }

    /// Notes that a queued record failed: the next save checkpoints first, and starts again from what the log holds.
    func invalidate() { isInvalid = true }

    /// Adds `save`'s objects to memory (when another process wrote them) and its head to the document's candidates.
    private func adopt(_ save: LoggedSave) throws {
        // This process's own saves wrote their objects into `writer` already.
        if save.origin != origin {
            // A landing killed before it emptied the log leaves records git holds already: they are git's, not the log's.
            if try reader.hasLanded(save) { return }
            for object in save.objects { try writer.insert(object) }
            _ = try writer.takeRecorded()
        }
        let key = save.head.key
        var candidates =
            try pendingHeads[key] ?? lastRead.flatMap { $0.key == key ? $0.heads : nil }
            ?? reader.headReferences(of: key).map(\.target)
        lastRead = nil
        let replaced = Set(save.head.replacing.map(\.objectID))
        candidates.removeAll { replaced.contains($0) || $0 == save.head.id.objectID }
        candidates.append(save.head.id.objectID)
        pendingHeads[key] = candidates
        pendingVersions[key] = nil
        pendingChanges.append(save.change)
    }

    static func unreadable(_ sequence: UInt64, in log: SaveLog) -> TruceError {
        .storeFailure(
            TruceError.StoreFailure(
                operation: "read \(log.path)", message: "record \(sequence) is not a save this version of Truce can read; the log is left as it is"))
    }
}
