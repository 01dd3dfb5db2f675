import Foundation

/// What one `sync` exchanged.
public struct SyncReport: Sendable, Codable {
    /// Versions this store did not have before, oldest first.
    public let received: [Change]
    /// Versions the other store did not have before (for a store Truce can open; otherwise the heads pushed).
    public let sent: Int
    /// Documents in conflict here after the sync.
    public let inConflict: [DocumentKey]
    /// Heads of the other store this store refused: they, or the history they bring, fail git's or Truce's checks.
    public let refused: [RefusedHead]
    /// Heads of this store the other store refused (for a store Truce can open).
    public let refusedByRemote: [RefusedHead]
}

extension DocumentStore {
    /// Exchanges versions with another store: a path, `file://`, ssh or https URL, through libgit2's transport.
    ///
    /// Heads are unioned and heads another head descends from drop out, so a
    /// resolution made on either side settles the conflict on both, and the
    /// current version is the same everywhere. Only version refs travel: no
    /// config, attributes or driver comes from the other side.
    public func sync(with remote: String) throws(TruceError) -> SyncReport {
        let localPath = Self.localPath(of: remote)
        var remoteStore: DocumentStore?
        if let localPath {
            do { remoteStore = try DocumentStore.open(at: localPath) } catch {
                throw .invalidRemote(remote, reason: error.errorDescription ?? "\(error)")
            }
        }
        let ours = try receive(from: remote)
        var sent = 0
        var refusedThere: [RefusedHead] = []
        if let remoteStore {
            // The other store takes our versions the way we took its: its journal and events see them.
            let theirs = try remoteStore.receive(from: path)
            sent = theirs.received.count
            refusedThere = theirs.refused
        } else {
            sent = try pushHeads(to: remote)
        }
        let inConflict = try documentsInConflict().map(\.key)
        return SyncReport(received: ours.received, sent: sent, inConflict: inConflict, refused: ours.refused, refusedByRemote: refusedThere)
    }

    /// Fetches the other store's heads and makes those this store lacks, and that pass the checks, local heads;
    /// returns the new versions and the heads refused.
    func receive(from remote: String) throws(TruceError) -> (received: [Change], refused: [RefusedHead]) {
        var events: [DocumentStateChange] = []
        let received = try withRepository { repository -> (received: [Change], refused: [RefusedHead]) in
            // Nothing from the other side is adopted unchecked: bad heads are refused by name, the good ones admitted.
            var refused: [RefusedHead] = []
            let byDirectory = try Self.fetchChecked(from: remote, into: repository, refused: &refused)
            var received: [Change] = []
            for (directory, incoming) in byDirectory.sorted(by: { $0.key < $1.key }) {
                guard let key = try Self.documentKey(of: incoming[0], in: repository),
                      ReferenceLayout.headsDirectory(of: key) == directory else { continue }
                let before = try Self.documentVersions(of: key, in: repository)
                let localHeads = before.heads.map(\.id)
                let new = try incoming.filter { id in
                    try !localHeads.contains { try $0 == id || repository.isDescendant($0, of: id) }
                }
                guard !new.isEmpty else { continue }
                // Every commit of this document the other store has and this one lacks, parents first.
                let arriving = try repository.walk(from: new, hiding: localHeads, oldestFirst: true)
                for id in new {
                    try Self.publishHead(id, of: key, replacing: [], message: "truce: sync \(key.rawValue)", in: repository)
                }
                let changes = try arriving.map { try Self.change(recording: Self.readVersion($0, of: key, in: repository)) }
                let recorded = Self.recordPublished(key, in: repository) { try ChangeJournal.append(changes, in: repository) }
                received += changes
                let after = try recorded ?? Self.documentVersions(of: key, in: repository)
                if let current = after.current {
                    events.append(DocumentStateChange(key: key, previous: before.state, current: after.state, version: current.id))
                }
            }
            return (received, refused)
        }
        events.forEach(eventHub.publish)
        return received
    }

    /// Pushes every head of this store to a remote Truce cannot open itself (ssh, https).
    private func pushHeads(to remote: String) throws(TruceError) -> Int {
        try withRepository { repository in
            let heads = try repository.references(matching: ReferenceLayout.allHeads).map(\.name)
            do { try repository.push(heads, to: remote) } catch let error as GitError { throw TruceError.invalidRemote(remote, reason: error.message) }
            return heads.count
        }
    }

    /// The journal entry for a version: a save, a deletion or a resolution by its author.
    static func change(recording version: Version) -> Change {
        let kind: ChangeKind = version.isResolution ? .resolution : version.isDeletion ? .delete : .save
        return Change(kind: kind, key: version.key, version: version.id, author: version.deviceName, date: version.modificationDate)
    }

    /// The key a version commit names, nil for a commit that is not a Truce version.
    static func documentKey(of id: VersionID, in repository: Repository) throws -> DocumentKey? {
        guard let message = VersionMessage(parsing: try repository.readCommit(id).message) else { return nil }
        return try? DocumentKey(message.key)
    }

    /// The directory for a path or `file://` URL; nil for ssh, https and other transports.
    static func localPath(of remote: String) -> String? {
        if remote.hasPrefix("file://") { return URL(string: remote)?.path }
        if remote.contains("://") || remote.range(of: #"^[^/]+@[^/]+:"#, options: .regularExpression) != nil { return nil }
        return remote
    }
}
