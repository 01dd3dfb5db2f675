import Foundation
internal import TruceGit

/// One write to the store, the only way versions land: new objects, then heads, then conflict markers, then the
/// change journal; the store delivers the events after.
///
/// A session reads what it writes against through a `ReadSession` of its
/// own (`reads`): a document's heads are listed once, and what the write
/// publishes is computed from them rather than read back.
///
/// Every writer goes through it: a save or a deletion, a batch, a resolution
/// and a bulk of them, a reopening, a sync adopting what it downloaded. Each
/// step is durable before the next starts, so a process killed or a machine
/// losing power between two steps leaves one of these states, each a clean
/// store that `git fsck --strict` passes:
///
/// 1. **Objects before heads.** A transaction's new objects (the version's
///    blob, trees and commit, and the journal entry) wait in memory and are
///    written in `commit` as one pack, fsynced with its index and its
///    directory, where loose objects would cost two fsyncs each (`FsyncCountTests` counts a save's);
///    a transaction too big for memory writes a pack each time memory fills (`writeVersion`). A
///    sync's download was moved in the same way before adopting. A head never
///    names a missing object. Objects no head reaches are garbage that prune
///    takes in time; the small packs saves leave are folded into one when they
///    grow many (`PackConsolidation`).
/// 2. **Heads by compare-and-swap.** A new head is created against "absent"
///    before the heads it replaces are dropped, so every acknowledged version
///    is reachable from some head at every instant, and two concurrent writers
///    both land (the document is then in conflict).
/// 3. **Markers after heads.** A conflict marker is a hint readers re-check;
///    prune rebuilds them all.
/// 4. **Journal last.** An entry is appended only for versions a head already
///    reaches: a crash before it leaves heads the journal lacks, which prune
///    journals. A sync names its versions in an intent file first, so that the
///    next sync journals them too.
///
/// Once a head is published, a failure of steps 3 and 4 is not thrown: the
/// caller would retry and write the version twice.
struct WriteSession {
    /// Where the session's new objects go.
    enum Objects {
        /// Memory, then one pack at `commit`: every writer but a sync.
        case packed
        /// Already in the store: a sync's download. Its journal entries are guarded by an intent (hold the `SyncLock`).
        case stored
        /// Memory, then a record of the save log at `commit`; git gets them when the log lands. One save at a time.
        case logged(SaveLogOverlay)
    }

    /// Where new objects are written: memory bound for one pack, the save log's memory, or the store itself.
    private enum Sink {
        case staging(ObjectStaging)
        case memory(MemoryRepository)
        case store(Repository)
    }

    /// The engine that reads the store: for a logged save, one over the save log's memory, which sees its pending saves.
    let store: StoreEngine
    /// What the session reads: each document's heads once.
    let reads: ReadSession
    private let kind: Objects
    private let sink: Sink
    private(set) var heads: [PendingHead] = []
    private(set) var changes: [Change] = []
    /// For a version a sync received, the replica manifest that listed it (the journal's `Via:`).
    var via: [VersionID: ObjectID] = [:]
    /// How the write's pack is deflated: `.stored` when landing the save log, to be folded later (see `PackCompression`).
    var compression: PackCompression = .standard
    /// A batch's listing of its documents' heads before it wrote, which publishing may take instead of reading
    /// `packed-refs` again (`publishHeads(_:listedBefore:)`).
    var headsListedBefore: BatchHeadListing?

    /// The store's repository, for reading what is there.
    var repository: Repository { store.repository }

    /// A session writing through `engine`: its objects into memory and then a pack, or (`.stored`) already in the store.
    init(in engine: StoreEngine, objects kind: Objects) throws {
        self.kind = kind
        switch kind {
        case .packed:
            // No handle of its own: the pack is written from the staged bytes, and the store's handle reads it after.
            sink = .staging(ObjectStaging())
            (store, reads) = (engine, ReadSession(engine: engine))
        case .stored:
            sink = .store(engine.repository)
            (store, reads) = (engine, ReadSession(engine: engine))
        case .logged(let overlay):
            // A logged save reads what the log holds too, which only the overlay's memory has.
            sink = .memory(try overlay.writer)
            store = try overlay.reader
            reads = ReadSession(engine: store, overlay: overlay)
        }
    }

    /// A session writing one save into the save log, over what the log holds.
    init(logging overlay: SaveLogOverlay) throws {
        try self.init(in: try overlay.reader, objects: .logged(overlay))
    }

    /// `key`'s heads as they stand for this write: with the save log's pending saves landed, when it writes to the
    /// log; read once per session.
    func versions(of key: DocumentKey) throws -> DocumentVersions {
        try reads.versions(of: key)
    }

    /// Adds an object written elsewhere (a save log record) to the objects `commit` packs.
    func insert(_ object: RawObject) throws {
        switch sink {
        case .staging(let staging): try staging.insert(object)
        case .memory(let memory): try memory.insert(object)
        case .store: break
        }
    }

    /// True when `id` is a commit this session staged or the store holds.
    func containsCommit(_ id: ObjectID) throws -> Bool {
        if case .staging(let staging) = sink, let object = staging.object(id) { return object.type == RawObject.commitType }
        return try repository.containsCommit(id)
    }

    /// Writes the chain of trees that holds `content` at `key`, or an empty tree for a deletion.
    ///
    /// Objects bound for a pack go straight into memory: libgit2's own write
    /// first asks every pack whether it has the object, which costs more
    /// with each pack a big batch has spilled.
    func writeTree(holding content: Data?, at key: DocumentKey) throws -> ObjectID {
        switch sink {
        case .staging(let staging): try Self.tree(holding: content, at: key, blob: staging.writeBlob, tree: staging.writeTree)
        case .memory(let memory): try Self.tree(holding: content, at: key, blob: memory.writeBlob, tree: memory.writeTree)
        case .store(let repository): try Self.tree(holding: content, at: key, blob: repository.writeBlob, tree: repository.writeTree)
        }
    }

    /// The chain of trees that holds `content` at `key` (an empty tree for a deletion), written by `blob` and `tree`.
    static func tree(
        holding content: Data?, at key: DocumentKey, blob: (Data) throws -> ObjectID, tree: ([TreeEntry]) throws -> ObjectID
    ) throws -> ObjectID {
        guard let content else { return try tree([]) }
        var segments = key.segments
        let leaf = String(segments.removeLast())
        var id = try tree([TreeEntry(name: leaf, id: try blob(content), isTree: false)])
        for segment in segments.reversed() {
            id = try tree([TreeEntry(name: String(segment), id: id, isTree: true)])
        }
        return id
    }

    /// Writes a version commit, the one place a written commit becomes a version; nothing names it until `commit`
    /// publishes a head.
    ///
    /// A transaction of many versions packs what memory holds once it is
    /// full (`ObjectStaging.spillIfFull`), between two versions: its memory
    /// follows the batch's spill limit, not its size.
    func writeVersion(tree: ObjectID, parents: [VersionID], author: Signature, committer: Signature, message: String) throws -> VersionID {
        let parents = parents.map(\.objectID)
        switch sink {
        case .staging(let staging):
            let id = try staging.writeCommit(tree: tree, parents: parents, author: author, committer: committer, message: message)
            try staging.spillIfFull(into: repository, compression: compression)
            return VersionID(id)
        case .memory(let memory):
            // A logged save is one version, its objects handed to the log whole (`commitToLog`): never spilled.
            return VersionID(try memory.writeCommit(tree: tree, parents: parents, author: author, committer: committer, message: message))
        case .store(let repository):
            return VersionID(try repository.writeCommit(tree: tree, parents: parents, author: author, committer: committer, message: message))
        }
    }

    /// Makes `head` one of the heads `commit` publishes.
    mutating func publish(_ head: PendingHead) { heads.append(head) }

    /// Records `change` in the journal entry `commit` appends.
    mutating func record(_ change: Change) { changes.append(change) }

    /// What a committed transaction leaves: each written document's heads as the marker update read them.
    struct Committed {
        fileprivate let store: StoreEngine
        fileprivate let read: [DocumentKey: DocumentVersions]

        /// `key`'s heads after the write: as the marker update read them, else read now.
        func versions(of key: DocumentKey) throws -> DocumentVersions {
            try read[key] ?? store.documentVersions(of: key)
        }

        /// The version `id` of `key` as it stands after the write (`isConflict` set when it is a conflict version).
        func version(_ id: VersionID, of key: DocumentKey) throws -> Version {
            try versions(of: key).heads.first { $0.id == id } ?? store.readVersion(id, of: key)
        }
    }

    /// Makes the objects durable, publishes the heads, brings the markers up to date and journals the changes, in that order.
    ///
    /// `cancellation` is checked one last time before anything leaves memory.
    /// Without `keepingReads`, `Committed` reads heads again when asked rather
    /// than hold every written document's: for a batch whose caller asks none.
    func commit(cancellation: Cancellation? = nil, keepingReads: Bool = true) throws -> Committed {
        if case .logged(let pending) = kind { return try commitToLog(pending) }
        let staging: ObjectStaging? = if case .staging(let staging) = sink { staging } else { nil }
        // A packed journal entry goes into the same pack as the versions it records: one fsync for both.
        let packedJournal = try staging.flatMap { staging in
            try changes.isEmpty ? nil : ChangeJournal(repository: repository).prepare(changes, via: via, into: staging)
        }
        try cancellation?.check()
        let packed = try staging?.flush(into: repository, compression: compression) ?? 0
        let intent = staging == nil && !changes.isEmpty ? try JournalIntent.record(changes.map(\.version), in: repository) : nil
        let published: PublishedHeads
        do {
            published = try store.publishHeads(heads, listedBefore: headsListedBefore)
        } catch {
            // Some heads may have landed: journal those now, or leave the intent to the next sync.
            if let intent { try? store.completeLeftover(intent) }
            throw error
        }
        // The heads have landed: from here on nothing is thrown (see the type's comment).
        var read = keepingReads ? published.versions : [:]
        let marking = published.marking.sorted()
        let marked = store.updateConflictMarkers(of: marking, startingFrom: published.versions)
        if keepingReads { for key in marking { read[key] = marked[key] } }
        let journal = ChangeJournal(repository: repository)
        if let intent {
            store.instrumentation.reach("sync-published")
            if (try? store.recordChanges(changes, via: via, intent: intent)) != nil { intent.remove() }
        } else if let packedJournal {
            try? { if try !journal.publish(packedJournal) { try journal.append(changes, via: via) } }()
        } else {
            try? journal.append(changes, via: via)
        }
        // Only tidying: every object is safe in its pack whether or not the small packs get folded.
        if packed > 0 { _ = try? PackConsolidation.consolidateIfNeeded(in: repository) }
        return Committed(store: store, read: read)
    }

    /// The logged save's commit: its objects, head and change as one save log record, queued; the caller waits for it.
    private func commitToLog(_ pending: SaveLogOverlay) throws -> Committed {
        guard let head = heads.first, let change = changes.first, heads.count == 1, changes.count == 1 else {
            preconditionFailure("a logged write is one save: one head and one change")
        }
        guard case .memory(let memory) = sink else { preconditionFailure("a logged write writes into the log's memory") }
        try pending.enqueue(LoggedSave(origin: pending.origin, objects: try memory.takeRecorded(), head: head, change: change))
        return Committed(store: store, read: [head.key: try pending.versions(of: head.key)])
    }
}

/// A head waiting to be published: its document, version, the heads it replaces, the reflog message.
struct PendingHead: Sendable {
    let key: DocumentKey
    let id: VersionID
    let replacing: [VersionID]
    let message: String
    /// The document's head references as the caller just read them under the sync lock; nil reads them here.
    var existing: [(name: String, target: ObjectID)]? = nil
    /// What the writer knows already of a single save: the document as it listed it, the new version and its tree.
    /// Publishing then works out the document's heads after the write instead of listing them again.
    var known: KnownDocument? = nil
}

/// A document as a writer read it before writing one new version of it, and that version.
///
/// A class, so that a `PendingHead` holds a reference to it: inline, it made every pending head of a batch (which has
/// none) over half a kilobyte, a hundred megabytes of an import of 100,000 documents (`PendingHeadTests`).
final class KnownDocument: @unchecked Sendable {
    // @unchecked: every field is a value, set once; the listing's tuples are values; nothing in it is shared.
    let before: DocumentVersions
    let listing: HeadListing
    let version: Version
    let tree: ObjectID

    init(before: DocumentVersions, listing: HeadListing, version: Version, tree: ObjectID) {
        (self.before, self.listing, self.version, self.tree) = (before, listing, version, tree)
    }
}
