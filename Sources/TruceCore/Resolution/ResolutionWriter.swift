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
        return try transacting(.packed) { transaction in
            let id = try transaction.writeResolution(conflict, settlement: settlement, resolver: resolver)
            transaction.publish(
                PendingHead(
                    key: key, id: id, replacing: conflict.settledVersions.map(\.id),
                    message: "truce: resolve \(key.rawValue) with \(resolver) on \(author)"))
            transaction.record(Change(kind: .resolution, key: key, version: id, author: author, date: Date()))
            let committed = try transaction.commit()
            return .resolved(try committed.version(id, of: key), resolver: resolver, state: try committed.versions(of: key).state)
        }
    }

    /// Writes many resolutions as one pack, then publishes their heads together: `resolveAll`'s bulk path.
    func writeAll(
        _ settled: [(conflict: ConflictSet, settlement: Settlement, resolver: String)], device: String, cancellation: Cancellation? = nil
    ) throws(TruceError) -> [DocumentKey: ResolveResult] {
        guard !settled.isEmpty else { return [:] }
        let author = try Self.authorName(device)
        return try transacting(.packed) { transaction in
            let now = Date()
            var written: [(key: DocumentKey, id: VersionID, resolver: String)] = []
            for (conflict, settlement, resolver) in settled {
                let id = try transaction.writeResolution(conflict, settlement: settlement, resolver: resolver)
                transaction.publish(
                    PendingHead(
                        key: conflict.key, id: id, replacing: conflict.settledVersions.map(\.id),
                        message: "truce: resolve \(conflict.key.rawValue) with \(resolver) on \(author)"))
                transaction.record(Change(kind: .resolution, key: conflict.key, version: id, author: author, date: now))
                written.append((conflict.key, id, resolver))
            }
            let committed = try transaction.commit(cancellation: cancellation)
            var results: [DocumentKey: ResolveResult] = [:]
            for (key, id, resolver) in written {
                results[key] = .resolved(try committed.version(id, of: key), resolver: resolver, state: try committed.versions(of: key).state)
            }
            return results
        }
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
        return try transacting(.packed) { transaction in
            let repository = transaction.repository
            let before = try Self.documentVersions(of: key, in: repository)
            guard before.current != nil else { throw TruceError.documentNotFound(key) }
            guard let resolution = before.allHeads.filter(\.isResolution).max(by: { Self.isMoreCurrent($1, $0) }) else {
                throw TruceError.nothingToReopen(key)
            }
            let now = Date()
            for parent in resolution.parents {
                let settled = try repository.readCommit(parent.objectID)
                let restored = try Self.readVersion(settled, of: key, in: repository)
                let message = VersionMessage(kind: .reopen, key: key.rawValue, device: restored.deviceName, reopens: resolution.id, restores: parent)
                let id = try transaction.writeVersion(
                    tree: settled.tree, parents: [resolution.id], author: settled.author,
                    committer: settled.author, message: message.text)
                transaction.publish(PendingHead(key: key, id: id, replacing: [resolution.id], message: "truce: reopen \(key.rawValue) on \(author)"))
                transaction.record(Change(kind: .reopen, key: key, version: id, author: author, date: now))
            }
            return try transaction.commit().versions(of: key)
        }
    }
}
