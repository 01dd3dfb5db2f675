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
        return try transacting(.packed) { transaction in
            let repository = transaction.repository
            var before: [DocumentKey: DocumentVersions] = [:]
            var tips: [DocumentKey: VersionID] = [:]
            var extraHeads: [(key: DocumentKey, id: VersionID, base: VersionID)] = []
            var ids: [VersionID] = []
            for (save, author) in zip(saves, authors) {
                // Until the commit below, the batch is in memory only: stopping here leaves the store as it was.
                try cancellation?.check()
                if before[save.key] == nil {
                    let versions = try Self.documentVersions(of: save.key, in: repository)
                    before[save.key] = versions
                    tips[save.key] = versions.current?.id
                }
                let kind: VersionMessage.Kind = save.content == nil ? .delete : .save
                let tree = try transaction.writeTree(holding: save.content, at: save.key)
                if let base = save.base {
                    guard try repository.containsCommit(base.objectID) else { throw TruceError.versionNotFound(base.hex) }
                    _ = try Self.readVersion(base, of: save.key, in: repository)
                }
                let parent = save.base ?? tips[save.key]
                var parents = parent.map { [$0] } ?? []
                if let parent, let versions = before[save.key], let head = versions.allHeads.first(where: { $0.id == parent }) {
                    parents = try Self.parents(basedOn: head, heads: versions, in: repository)
                }
                let id = try transaction.writeVersion(
                    tree: tree, parents: parents, author: Signature(device: author, date: save.date),
                    committer: Signature(device: author, date: save.committerDate ?? Date()),
                    message: VersionMessage(kind: kind, key: save.key.rawValue, device: author).text)
                if let base = save.base { extraHeads.append((save.key, id, base)) } else { tips[save.key] = id }
                ids.append(id)
                transaction.record(Change(kind: save.content == nil ? .delete : .save, key: save.key, version: id, author: author, date: save.date))
                progress?(ids.count, saves.count)
            }
            for (key, tip) in tips.sorted(by: { $0.key < $1.key }) where tip != before[key]?.current?.id {
                transaction.publish(
                    PendingHead(key: key, id: tip, replacing: before[key]?.current.map { [$0.id] } ?? [], message: "truce: save \(key.rawValue)"))
            }
            for extra in extraHeads {
                transaction.publish(PendingHead(key: extra.key, id: extra.id, replacing: [extra.base], message: "truce: save \(extra.key.rawValue)"))
            }
            _ = try transaction.commit(cancellation: cancellation)
            return ids
        }
    }
}
