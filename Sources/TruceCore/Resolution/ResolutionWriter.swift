import Foundation
internal import TruceGit

/// How a resolution settles the conflict: with new content, or by keeping one head's tree as it is.
enum Settlement {
    case content(Data?)
    case kept(Version)
}

extension DocumentStore {
    /// Writes the resolution commit of `conflict` and drops the heads it settles, in one step.
    ///
    /// Parents are the current version first, then every loser, so git's
    /// ancestry records what was resolved. The new head reference is created
    /// before the settled ones are dropped: a crash in between leaves refs that
    /// readers ignore (their versions are ancestors of the resolution), never a
    /// lost head. A save that landed after `conflict` was read is not a parent,
    /// so it stays a head.
    func write(_ conflict: ConflictSet, settlement: Settlement, resolver: String, device: String) throws(TruceError) -> ResolveResult {
        let author = try Self.authorName(device)
        let key = conflict.key
        let (version, state) = try withRepository { repository in
            let now = Date()
            let id = try Self.writeResolution(conflict, settlement: settlement, resolver: resolver, in: repository)
            try Self.publishHead(
                id, of: key, replacing: conflict.settledVersions.map(\.id),
                message: "truce: resolve \(key.rawValue) with \(resolver) on \(author)", in: repository)
            let recorded = Self.recordPublished(key, in: repository) {
                try ChangeJournal.append([Change(kind: .resolution, key: key, version: id, author: author, date: now)], in: repository)
            }
            let after = try recorded ?? Self.documentVersions(of: key, in: repository)
            return (try after.heads.first { $0.id == id } ?? Self.readVersion(id, of: key, in: repository), after.state)
        }
        deliverEvents()
        return .resolved(version, resolver: resolver, state: state)
    }

    /// Writes many resolutions as one pack, then publishes their heads together: `resolveAll`'s bulk path.
    func writeAll(
        _ settled: [(conflict: ConflictSet, settlement: Settlement, resolver: String)], device: String, cancellation: Cancellation? = nil
    ) throws(TruceError) -> [DocumentKey: ResolveResult] {
        guard !settled.isEmpty else { return [:] }
        let author = try Self.authorName(device)
        let results = try withRepository { repository in
            let bulk = try BulkWriter(path: repository.path)
            let now = Date()
            var heads: [PendingHead] = []
            var changes: [Change] = []
            for (conflict, settlement, resolver) in settled {
                let id = try Self.writeResolution(conflict, settlement: settlement, resolver: resolver, in: bulk.repository, recording: bulk)
                heads.append(
                    PendingHead(
                        key: conflict.key, id: id, replacing: conflict.settledVersions.map(\.id),
                        message: "truce: resolve \(conflict.key.rawValue) with \(resolver) on \(author)"))
                changes.append(Change(kind: .resolution, key: conflict.key, version: id, author: author, date: now))
            }
            let journal = try ChangeJournal.prepare(changes, in: bulk.repository, recording: bulk)
            // The last point a cancellation stops at: until the flush, every object is in memory only.
            try cancellation?.check()
            try bulk.flush()
            try Self.publishHeads(heads, in: repository)
            try? { if try !ChangeJournal.publish(journal, in: repository) { try ChangeJournal.append(changes, in: repository) } }()
            var results: [DocumentKey: ResolveResult] = [:]
            for (head, (_, _, resolver)) in zip(heads, settled) {
                let after = try Self.documentVersions(of: head.key, in: repository)
                let version = try after.heads.first { $0.id == head.id } ?? Self.readVersion(head.id, of: head.key, in: repository)
                results[head.key] = .resolved(version, resolver: resolver, state: after.state)
            }
            return results
        }
        deliverEvents()
        return results
    }

    /// Writes the resolution commit of `conflict`; no ref moves.
    ///
    /// The commit is a function of the conflict and the resolver's answer
    /// alone, so replicas that settle the same heads alike write the same
    /// commit and sync unions them into one head: the tree holds the answer;
    /// the parents are every head (equivalents included), the current version
    /// first, then the current-version rule's order; author and committer are
    /// the resolver's name with the latest author date among the heads; the
    /// message names the document, the resolver and every loser. Who ran it
    /// is recorded outside the commit: the change journal and the reflog.
    static func writeResolution(
        _ conflict: ConflictSet, settlement: Settlement, resolver: String,
        in repository: Repository, recording bulk: BulkWriter? = nil
    ) throws -> VersionID {
        let tree: ObjectID
        switch settlement {
        case .content(let content): tree = try writeTree(holding: content, at: conflict.key, in: repository, recording: bulk)
        case .kept(let version): tree = try repository.readCommit(version.id.objectID).tree
        }
        let parents = conflict.settledVersions
        let name = (try? authorName(resolver)) ?? "truce"
        let signature = Signature(device: name, date: parents.map(\.modificationDate).max()!)
        let message = VersionMessage(
            kind: .resolve, key: conflict.key.rawValue, device: name, resolvedBy: resolver,
            resolves: parents.dropFirst().map(\.id))
        let id = try repository.writeVersion(tree: tree, parents: parents.map(\.id), author: signature, committer: signature, message: message.text)
        bulk?.record(id.objectID)
        return id
    }

    /// Turns the newest resolution among the heads back into the conflict it settled, as new versions sync carries.
    ///
    /// Each version the resolution settled comes back as a reopening: a
    /// version whose parent is the resolution and whose tree, author and date
    /// are that settled version's (`Reopens:` names the resolution,
    /// `Restores:` the version). The resolution is then an ancestor of every
    /// head, so a replica that still has it as a head drops it when it syncs,
    /// and the conflict stays open everywhere until someone resolves it again.
    /// Reopenings are a function of the resolution alone: two replicas that
    /// reopen the same resolution write the same versions. The base of the
    /// reopened conflict is the base the settled versions had.
    @discardableResult
    public func reopen(_ key: DocumentKey, device: String? = nil) throws(TruceError) -> DocumentVersions {
        let author = try author(device)
        let after = try withRepository { repository in
            let before = try Self.documentVersions(of: key, in: repository)
            guard before.current != nil else { throw TruceError.documentNotFound(key) }
            guard let resolution = before.allHeads.filter(\.isResolution).max(by: { Self.isMoreCurrent($1, $0) }) else {
                throw TruceError.nothingToReopen(key)
            }
            var reopenings: [VersionID] = []
            for parent in resolution.parents {
                let settled = try repository.readCommit(parent.objectID)
                let restored = try Self.readVersion(settled, of: key, in: repository)
                let message = VersionMessage(kind: .reopen, key: key.rawValue, device: restored.deviceName, reopens: resolution.id, restores: parent)
                let id = try repository.writeVersion(
                    tree: settled.tree, parents: [resolution.id], author: settled.author,
                    committer: settled.author, message: message.text)
                try Self.publishHead(id, of: key, replacing: [resolution.id], message: "truce: reopen \(key.rawValue) on \(author)", in: repository)
                reopenings.append(id)
            }
            let now = Date()
            let recorded = Self.recordPublished(key, in: repository) {
                try ChangeJournal.append(reopenings.map { Change(kind: .reopen, key: key, version: $0, author: author, date: now) }, in: repository)
            }
            return try recorded ?? Self.documentVersions(of: key, in: repository)
        }
        deliverEvents()
        return after
    }
}
