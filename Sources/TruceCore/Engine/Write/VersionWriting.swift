import Foundation
internal import TruceGit

/// A save or a deletion staged in a `WriteSession`: the version's tree and commit, its head and its change.
extension WriteSession {
    /// Writes `content` (nil: a deletion) as a new version of `key` based on `base` (nil: the current version), dated
    /// `date` or later (`HybridDates`), and commits; returns the version with the document's state after it, and the change with the states around it.
    /// A restore names the dropped value it brings back (`Restores-Dropped:`).
    mutating func save(_ content: Data?, to key: DocumentKey, base: VersionID?, author: String, date: Date, restoring: RestoredDrop? = nil) throws
        -> (result: SaveResult, event: DocumentStateChange)
    {
        let (id, change, before) = try stageSave(content, to: key, base: base, author: author, date: date, restoring: restoring)
        let committed = try commit()
        let after = try committed.versions(of: key).state
        return (
            SaveResult(version: try committed.version(id, of: key), state: after),
            DocumentStateChange(change: change, previous: before.state, current: after)
        )
    }

    /// Stages the version `save` writes, without committing: for a write that saves beside something else (a
    /// resolution and the answers it records).
    mutating func stageSave(_ content: Data?, to key: DocumentKey, base: VersionID?, author: String, date: Date, restoring: RestoredDrop? = nil)
        throws
        -> (id: VersionID, change: Change, before: DocumentVersions)
    {
        let (before, listing) = try reads.listedVersions(of: key)
        let parent: Version?
        if let base {
            guard try repository.containsCommit(base.objectID) else { throw TruceError.versionNotFound(base.hex) }
            parent = try store.readVersion(base, of: key)
        } else {
            parent = before.current
        }
        if content == nil {
            guard let parent else { throw TruceError.documentNotFound(key) }
            if parent.isDeletion { throw TruceError.alreadyDeleted(key, version: parent.id) }
        }
        let kind: VersionMessage.Kind = content == nil ? .delete : .save
        var message = VersionMessage(kind: kind, key: key.rawValue, device: author)
        message.restoresDropped = restoring
        let tree = try writeTree(holding: content, at: key)
        let parents = try parent.map { try store.parents(basedOn: $0, heads: before) } ?? []
        // Every parent is the base or a head just read: their dates are at hand.
        let known = before.allHeads + (parent.map { [$0] } ?? [])
        let dated = HybridDates.date(
            asking: date, parents: parents.compactMap { id in known.first { $0.id == id }?.modificationDate }, in: repository)
        try Signature.checkRepresentable(dated)
        let signature = Signature(device: author, date: dated)
        let committer = Signature(device: author, date: Date())
        let id = try writeVersion(tree: tree, parents: parents, author: signature, committer: committer, message: message.text)
        let version = Version(
            id: id, key: key, deviceName: author, modificationDate: Date(timeIntervalSince1970: TimeInterval(signature.time)),
            isDeletion: content == nil, parents: parents)
        var head = PendingHead(key: key, id: id, replacing: parents, message: "truce: \(kind.rawValue.lowercased()) \(key.rawValue)")
        head.known = listing.map { KnownDocument(before: before, listing: $0, version: version, tree: tree) }
        publish(head)
        let change = Change(kind: content == nil ? .delete : .save, key: key, version: id, author: author, date: dated)
        record(change)
        return (id, change, before)
    }
}

extension StoreEngine {
    /// The parents of a version based on `base`: `base`, then every other head holding the same content.
    ///
    /// Heads with identical content count as one, so a save based on any of
    /// them supersedes them all, here and on every replica it syncs to.
    func parents(basedOn base: Version, heads: DocumentVersions) throws -> [VersionID] {
        let others = heads.allHeads.filter { $0.id != base.id }
        guard !others.isEmpty, heads.allHeads.contains(where: { $0.id == base.id }) else { return [base.id] }
        let tree = try repository.readCommit(base.id.objectID).tree
        return try [base.id] + others.filter { try repository.readCommit($0.id.objectID).tree == tree }.map(\.id)
    }
}
