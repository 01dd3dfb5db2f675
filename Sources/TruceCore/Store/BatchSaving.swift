import Foundation
internal import TruceGit

/// One save of a batch: content (nil for a deletion) for a key, by a device, at a date.
public struct BatchSave: Sendable {
    /// The document saved.
    public let key: DocumentKey
    /// The new content; nil saves a deletion.
    public let content: Data?
    /// The device that saves it; nil is the store's device, else `DocumentStore.fallbackDevice`, as for every `device:`.
    public let device: String?
    /// The version's author date.
    public let date: Date
    /// The version this save is made from; nil chains it on the key's previous save in the batch, or its current version.
    public let base: VersionID?
    /// git's committer date, when the version is written; nil is now. Fixing it (with `date`) makes the version id
    /// the same on every run, which is what TruceTesting's fabricated stores need.
    public let committerDate: Date?

    /// A save of `content` to `key`; every parameter but those two has `save`'s default.
    public init(
        key: DocumentKey, content: Data?, device: String? = nil, date: Date = Date(), base: VersionID? = nil, committerDate: Date? = nil
    ) {
        self.key = key
        self.content = content
        self.device = device
        self.date = date
        self.base = base
        self.committerDate = committerDate
    }
}

extension DocumentStore {
    /// Saves many versions at once, writing them as one pack the way `git fast-import` does.
    ///
    /// Saves of one key chain in the given order, the first on the key's
    /// current version, unless a save names its own `base` (which must be a
    /// version of that key): then it lands beside the others, as `save` does. Nothing is acknowledged until the pack is durable and
    /// every head is published; a version saved meanwhile by another writer
    /// stays a head beside the batch's (the document is then in conflict).
    /// Returns the new version ids in the order of `saves`.
    public func saveBatch(_ saves: [BatchSave]) throws(TruceError) -> [VersionID] {
        try saveBatch(saves, cancellation: nil)
    }

    /// `saveBatch`, stopping with `TruceError.cancelled` once `cancellation` is set: between saves, or before the pack
    /// is written, so a cancelled batch leaves nothing on disk. `progress` hears (saves written, saves in all).
    func saveBatch(
        _ saves: [BatchSave], cancellation: Cancellation?, progress: (@Sendable (_ done: Int, _ total: Int) -> Void)? = nil
    ) throws(TruceError) -> [VersionID] {
        guard !saves.isEmpty else { return [] }
        let authors = try saves.map { save throws(TruceError) in try author(save.device) }
        for save in saves {
            try Signature.checkRepresentable(save.date)
            if let committed = save.committerDate { try Signature.checkRepresentable(committed) }
        }
        let ids = try withRepository { repository in
            let bulk = try BulkWriter(path: repository.path)
            var before: [DocumentKey: DocumentVersions] = [:]
            var tips: [DocumentKey: VersionID] = [:]
            var extraHeads: [(key: DocumentKey, id: VersionID, base: VersionID)] = []
            var ids: [VersionID] = []
            var changes: [Change] = []
            for (save, author) in zip(saves, authors) {
                // Until the flush below, the batch is in memory only: stopping here leaves the store as it was.
                try cancellation?.check()
                if before[save.key] == nil {
                    let versions = try Self.documentVersions(of: save.key, in: repository)
                    before[save.key] = versions
                    tips[save.key] = versions.current?.id
                }
                let kind: VersionMessage.Kind = save.content == nil ? .delete : .save
                let tree = try Self.writeTree(holding: save.content, at: save.key, in: bulk.repository, recording: bulk)
                if let base = save.base {
                    guard try repository.containsCommit(base.objectID) else { throw TruceError.versionNotFound(base.hex) }
                    _ = try Self.readVersion(base, of: save.key, in: repository)
                }
                let parent = save.base ?? tips[save.key]
                var parents = parent.map { [$0] } ?? []
                if let parent, let versions = before[save.key], let head = versions.allHeads.first(where: { $0.id == parent }) {
                    parents = try Self.parents(basedOn: head, heads: versions, in: repository)
                }
                let id = try bulk.repository.writeVersion(
                    tree: tree, parents: parents, author: Signature(device: author, date: save.date),
                    committer: Signature(device: author, date: save.committerDate ?? Date()),
                    message: VersionMessage(kind: kind, key: save.key.rawValue, device: author).text)
                bulk.record(id.objectID)
                if let base = save.base { extraHeads.append((save.key, id, base)) } else { tips[save.key] = id }
                ids.append(id)
                changes.append(Change(kind: save.content == nil ? .delete : .save, key: save.key, version: id, author: author, date: save.date))
                progress?(ids.count, saves.count)
            }
            // The journal entries go into the same pack; the journal moves to them only after the heads are published.
            let journal = try ChangeJournal.prepare(changes, in: bulk.repository, recording: bulk)
            try cancellation?.check()
            try bulk.flush()
            var heads = tips.sorted(by: { $0.key < $1.key }).filter { $0.value != before[$0.key]?.current?.id }.map {
                PendingHead(
                    key: $0.key, id: $0.value, replacing: before[$0.key]?.current.map { [$0.id] } ?? [], message: "truce: save \($0.key.rawValue)")
            }
            heads += extraHeads.map { PendingHead(key: $0.key, id: $0.id, replacing: [$0.base], message: "truce: save \($0.key.rawValue)") }
            try Self.publishHeads(heads, in: repository)
            // The heads have landed: see recordPublished.
            try? { if try !ChangeJournal.publish(journal, in: repository) { try ChangeJournal.append(changes, in: repository) } }()
            return ids
        }
        deliverEvents()
        return ids
    }

    /// Publishes many heads at once, as lines of `packed-refs` written in one durable rewrite.
    ///
    /// A loose ref costs two files, two directories and four fsyncs (ref,
    /// reflog, their directories), which made a 10,000-document sync write
    /// 160 MB; packed, a head is one line. The change journal, whose reflog
    /// records every append, is the audit of heads published this way. The
    /// heads each one replaces leave in the same rewrite when they are packed,
    /// and as loose files right after; a head already published stays as it
    /// is. Heads and journal are published in that order, as for one save: a
    /// crash in between leaves heads the journal lacks, which the next sync
    /// or prune journals (see `publishJournaled`).
    static func publishHeads(_ heads: [PendingHead], in repository: Repository) throws {
        guard heads.count > 8 else {
            for head in heads {
                try publishHead(head.id, of: head.key, replacing: head.replacing, message: head.message, in: repository)
                recordPublished(head.key, in: repository) {}
            }
            return
        }
        var additions: [(name: String, target: ObjectID)] = []
        var replaced: [(name: String, target: ObjectID)] = []
        // A document that had no head and gets one cannot be in conflict: its marker needs reading only if one is left.
        var headsPerNewDocument: [DocumentKey: Int] = [:]
        for head in heads {
            let name = ReferenceLayout.headReference(of: head.key, version: head.id)
            let existing = try head.existing ?? headReferences(of: head.key, in: repository)
            if existing.isEmpty { headsPerNewDocument[head.key, default: 0] += 1 }
            if !existing.contains(where: { $0.name == name }) { additions.append((name, head.id.objectID)) }
            for reference in existing where reference.target != head.id.objectID {
                let target = VersionID(reference.target)
                if try head.replacing.contains(target) || repository.isDescendant(head.id.objectID, of: reference.target) {
                    replaced.append(reference)
                }
            }
        }
        let packedReplaced = try repository.packedNames(among: replaced.map(\.name))
        try withLockRetries(on: "packed-refs", in: repository) {
            try PackedReferences.update(in: repository.gitDirectory, adding: additions, removing: packedReplaced)
        }
        // Only tidying, as in publishHead: a replaced ref left behind is filtered out by readers.
        try? withLockRetries(on: "packed-refs", in: repository) {
            try repository.deleteReferences(replaced)
        }
        // Markers are few (one per document in conflict): one listing, not one lookup per document.
        let markers = Set(try repository.references(under: ConflictIndex.root).map(\.name))
        for key in Set(heads.map(\.key)).sorted() {
            let settled = headsPerNewDocument[key] == 1 && (markers.isEmpty || !markers.contains(ConflictIndex.marker(of: key)))
            if !settled { recordPublished(key, in: repository) {} }
        }
    }
}

/// A head written in bulk and waiting to be published: its document, version, the heads it replaces, the reflog message.
struct PendingHead: Sendable {
    let key: DocumentKey
    let id: VersionID
    let replacing: [VersionID]
    let message: String
    /// The document's head references as the caller just read them under the sync lock; nil reads them here.
    var existing: [(name: String, target: ObjectID)]? = nil
}
