import Foundation
internal import TruceGit

/// Many saves staged in one `WriteTransaction`, written as one pack the way `git fast-import` writes them.
extension WriteTransaction {
    /// Stages every save of `saves` (by `authors`, one each), each dated as a single save is (`HybridDates`), and
    /// commits; returns the new version ids in order.
    ///
    /// Stops with `TruceError.cancelled` once `cancellation` is set: between
    /// saves, or before the pack is written, so a cancelled batch leaves
    /// nothing on disk. `progress` hears (saves written, saves in all).
    mutating func saveBatch(
        _ saves: [BatchSave], authors: [String], cancellation: Cancellation?, progress: (@Sendable (_ done: Int, _ total: Int) -> Void)?
    ) throws -> [VersionID] {
        let newestAdopted = NewestAdoptedDate.read(in: repository)
        // The dates of the versions a save here may be made from: heads read, bases named, this batch's own.
        var dates: [VersionID: Date] = [:]
        var before: [DocumentKey: DocumentVersions] = [:]
        var tips: [DocumentKey: VersionID] = [:]
        var extraHeads: [(key: DocumentKey, id: VersionID, base: VersionID)] = []
        var ids: [VersionID] = []
        for (save, author) in zip(saves, authors) {
            // Until the commit below, the batch is in memory only: stopping here leaves the store as it was.
            try cancellation?.check()
            if before[save.key] == nil {
                let versions = try store.documentVersions(of: save.key)
                before[save.key] = versions
                tips[save.key] = versions.current?.id
                for head in versions.allHeads { dates[head.id] = head.modificationDate }
            }
            let kind: VersionMessage.Kind = save.content == nil ? .delete : .save
            let tree = try writeTree(holding: save.content, at: save.key)
            if let base = save.base {
                guard try repository.containsCommit(base.objectID) else { throw TruceError.versionNotFound(base.hex) }
                dates[base] = try store.readVersion(base, of: save.key).modificationDate
            }
            let parent = save.base ?? tips[save.key]
            var parents = parent.map { [$0] } ?? []
            if let parent, let versions = before[save.key], let head = versions.allHeads.first(where: { $0.id == parent }) {
                parents = try store.parents(basedOn: head, heads: versions)
            }
            let dated = HybridDates.date(asking: save.date, parents: parents.compactMap { dates[$0] }, newestAdopted: newestAdopted)
            try Signature.checkRepresentable(dated)
            let id = try writeVersion(
                tree: tree, parents: parents, author: Signature(device: author, date: dated),
                committer: Signature(device: author, date: save.committerDate ?? Date()),
                message: VersionMessage(kind: kind, key: save.key.rawValue, device: author).text)
            dates[id] = dated
            if let base = save.base { extraHeads.append((save.key, id, base)) } else { tips[save.key] = id }
            ids.append(id)
            record(Change(kind: save.content == nil ? .delete : .save, key: save.key, version: id, author: author, date: dated))
            progress?(ids.count, saves.count)
        }
        for (key, tip) in tips.sorted(by: { $0.key < $1.key }) where tip != before[key]?.current?.id {
            publish(PendingHead(key: key, id: tip, replacing: before[key]?.current.map { [$0.id] } ?? [], message: "truce: save \(key.rawValue)"))
        }
        for extra in extraHeads {
            publish(PendingHead(key: extra.key, id: extra.id, replacing: [extra.base], message: "truce: save \(extra.key.rawValue)"))
        }
        _ = try commit(cancellation: cancellation)
        return ids
    }
}
