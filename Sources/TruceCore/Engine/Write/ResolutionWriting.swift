import Foundation
internal import TruceGit

/// How a resolution settles the conflict: with new content, or by keeping one head's tree as it is; and what the
/// resolver reported it kept and dropped.
enum Settlement: Sendable {
    case content(Data?, decisions: [ResolutionDecision] = [])
    case kept(Version, decisions: [ResolutionDecision] = [])

    /// What the resolver recorded, as it recorded it: the commit holds them as `DecisionsSection` normalizes them.
    var decisions: [ResolutionDecision] {
        switch self {
        case .content(_, let decisions), .kept(_, let decisions): decisions
        }
    }
}

/// Resolutions staged in a `WriteSession`: the commit, its head replacing the heads it settles, its change.
extension WriteSession {
    /// Stages the resolution of `conflict` that `resolver` decided, run by `author`, at `now` (the journal's date).
    ///
    /// The new head reference is created before the settled ones are
    /// dropped: a crash in between leaves refs that readers ignore (their
    /// versions are ancestors of the resolution), never a lost head. A save
    /// that landed after `conflict` was read is not a parent, so it stays a head.
    mutating func resolve(_ conflict: ConflictSet, settlement: Settlement, resolver: String, author: String, now: Date) throws -> VersionID {
        let key = conflict.key
        let id = try writeResolution(conflict, settlement: settlement, resolver: resolver)
        publish(
            PendingHead(
                key: key, id: id, replacing: conflict.settledVersions.map(\.id),
                message: "truce: resolve \(key.rawValue) with \(resolver) on \(author)"
            ))
        record(Change(kind: .resolution, key: key, version: id, author: author, date: now))
        return id
    }

    /// Writes the resolution commit of `conflict`; no ref moves.
    ///
    /// The commit is a function of the conflict and the resolver's answer
    /// alone, so replicas that settle the same heads alike write the same
    /// commit and sync unions them into one head: the tree holds the answer;
    /// the parents are every head (equivalents included), the current version
    /// first, then the current-version rule's order; author and committer are
    /// the resolver's name with the latest author date among the heads; the
    /// message names the document, the resolver and every loser, and holds
    /// what the resolver recorded it kept and dropped (`DecisionsSection`,
    /// itself a function of the conflict and those decisions). Who ran it
    /// is recorded outside the commit: the change journal and the reflog.
    func writeResolution(_ conflict: ConflictSet, settlement: Settlement, resolver: String) throws -> VersionID {
        let tree: ObjectID
        switch settlement {
        case .content(let content, _): tree = try writeTree(holding: content, at: conflict.key)
        case .kept(let version, _): tree = try repository.readCommit(version.id.objectID).tree
        }
        let parents = conflict.settledVersions
        let name = (try? DeviceName.validated(resolver)) ?? "truce"
        let signature = Signature(device: name, date: parents.map(\.modificationDate).max()!)
        var message = VersionMessage(
            kind: .resolve, key: conflict.key.rawValue, device: name, resolvedBy: resolver, resolves: parents.dropFirst().map(\.id))
        message.decisions = DecisionsSection(normalizing: settlement.decisions, for: conflict)
        return try writeVersion(tree: tree, parents: parents.map(\.id), author: signature, committer: signature, message: message.text)
    }

    /// Stages the reopening of the newest resolution among `key`'s heads, by `author`, and commits; returns the
    /// document's versions after it.
    ///
    /// Each version the resolution settled comes back as a reopening: a
    /// version whose parent is the resolution and whose tree, author and date
    /// are that settled version's (`Reopens:` names the resolution,
    /// `Restores:` the version). The resolution is then an ancestor of every
    /// head, so a replica that still has it as a head drops it when it syncs,
    /// and the conflict stays open everywhere until someone resolves it again.
    /// Reopenings are a function of the resolution alone: two replicas that
    /// reopen the same resolution write the same versions.
    mutating func reopen(_ key: DocumentKey, author: String) throws -> DocumentVersions {
        let before = try store.documentVersions(of: key)
        guard before.current != nil else { throw TruceError.documentNotFound(key) }
        guard let resolution = before.allHeads.filter(\.isResolution).max(by: { $1.isMoreCurrent(than: $0) }) else {
            throw TruceError.nothingToReopen(key)
        }
        let now = Date()
        for parent in resolution.parents {
            let settled = try repository.readCommit(parent.objectID)
            let restored = try store.readVersion(settled, of: key)
            let message = VersionMessage(kind: .reopen, key: key.rawValue, device: restored.deviceName, reopens: resolution.id, restores: parent)
            let id = try writeVersion(
                tree: settled.tree, parents: [resolution.id], author: settled.author, committer: settled.author, message: message.text)
            publish(PendingHead(key: key, id: id, replacing: [resolution.id], message: "truce: reopen \(key.rawValue) on \(author)"))
            record(Change(kind: .reopen, key: key, version: id, author: author, date: now))
        }
        return try commit().versions(of: key)
    }
}
