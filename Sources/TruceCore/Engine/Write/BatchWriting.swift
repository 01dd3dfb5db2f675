import Foundation
internal import TruceGit

/// Many saves staged in one `WriteSession`, written as one pack the way `git fast-import` writes them.
extension WriteSession {
    /// Stages every save of `saves` (by `authors`, one each), each dated as a single save is (`HybridDates`), and
    /// commits; returns the new version ids in order.
    ///
    /// Stops with `TruceError.cancelled` once `cancellation` is set: between
    /// saves, or before the last pack is written, so a cancelled batch leaves
    /// no version: at most the packs a batch too big for memory wrote on the
    /// way, which no head names and `prune` reclaims. `progress` hears (saves
    /// written, saves in all).
    mutating func saveBatch(
        _ saves: [BatchSave], authors: [String], cancellation: Cancellation?, progress: (@Sendable (_ done: Int, _ total: Int) -> Void)?
    ) throws -> [VersionID] {
        // The dates of the versions a save here may be made from: bases named, heads read, this batch's own. Every
        // base is checked and dated before anything is written: a big batch packs as it goes (`writeVersion`), and
        // bad input must leave the store as it was.
        var dates: [VersionID: Date] = [:]
        for save in saves {
            guard let base = save.base else { continue }
            guard try repository.containsCommit(base.objectID) else { throw TruceError.versionNotFound(base.hex) }
            dates[base] = try store.readVersion(base, of: save.key).modificationDate
        }
        let newestAdopted = NewestAdoptedDate.read(in: repository)
        // Per document, what it was before the batch: its current version (nil when absent) and, when it had more
        // than one head, all of them, for a save's parents. A million documents' full heads would not fit in memory.
        var before: [DocumentKey: VersionID?] = [:]
        var crowded: [DocumentKey: DocumentVersions] = [:]
        var tips: [DocumentKey: VersionID] = [:]
        var extraHeads: [(key: DocumentKey, id: VersionID, base: VersionID)] = []
        var ids: [VersionID] = []
        ids.reserveCapacity(saves.count)
        headsListedBefore = try headReferencesBefore(saves)
        let existing = headsListedBefore?.byKey ?? [:]
        for (save, author) in zip(saves, authors) {
            // Until the commit below, no head names what the batch wrote: stopping here leaves the store's versions as they were.
            try cancellation?.check()
            if before[save.key] == nil {
                let versions = try store.documentVersions(of: save.key, amongCandidates: (existing[save.key] ?? []).map(\.target))
                before[save.key] = .some(versions.current?.id)
                tips[save.key] = versions.current?.id
                if versions.allHeads.count > 1 { crowded[save.key] = versions }
                for head in versions.allHeads { dates[head.id] = head.modificationDate }
            }
            let kind: VersionMessage.Kind = save.content == nil ? .delete : .save
            let tree = try writeTree(holding: save.content, at: save.key)
            let parent = save.base ?? tips[save.key]
            var parents = parent.map { [$0] } ?? []
            if let parent, let versions = crowded[save.key], let head = versions.allHeads.first(where: { $0.id == parent }) {
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
        for (key, tip) in tips.sorted(by: { $0.key < $1.key }) {
            let current = before[key] ?? nil
            guard tip != current else { continue }
            publish(PendingHead(key: key, id: tip, replacing: current.map { [$0] } ?? [], message: "truce: save \(key.rawValue)"))
        }
        for extra in extraHeads {
            publish(PendingHead(key: extra.key, id: extra.id, replacing: [extra.base], message: "truce: save \(extra.key.rawValue)"))
        }
        _ = try commit(cancellation: cancellation, keepingReads: false)
        return ids
    }

    /// The head references of every document `saves` writes, as they are before the batch, read together: one listing
    /// of the loose heads and one look at `packed-refs` (none at all in a store without heads), where a listing per
    /// document was a third of a big import's time.
    /// Publishing reads them again (`publishHeads`), the loose ones only when `packed-refs` has not changed since: a
    /// head another writer published meanwhile stays beside the batch's. Nil in a store without heads.
    private func headReferencesBefore(_ saves: [BatchSave]) throws -> BatchHeadListing? {
        guard try repository.mayHaveReferences(under: ReferenceLayout.headsRoot) else { return nil }
        let keys = Array(Set(saves.map(\.key)))
        let listing = try repository.listing(
            underEach: keys.map(ReferenceLayout.headsDirectory(of:)), listingLooseUnder: ReferenceLayout.headsRoot)
        return BatchHeadListing(
            byKey: Dictionary(uniqueKeysWithValues: zip(keys, listing.references)), looseNames: listing.looseNames,
            packedStamp: listing.packedStamp)
    }
}
