import Foundation

/// What one `sync` exchanged.
public struct SyncReport: Sendable, Codable {
    /// Versions this store did not have before, oldest first.
    public let received: [Change]
    /// Versions the other store did not have before (for a store Truce can open; otherwise the heads pushed).
    public let sent: Int
    /// Documents in conflict here after the sync (and after resolving, with `resolving`).
    public let inConflict: [DocumentKey]
    /// Heads of the other store this store refused: they, or the history they bring, fail git's or Truce's checks.
    public let refused: [RefusedHead]
    /// Heads of this store the other store refused (for a store Truce can open).
    public let refusedByRemote: [RefusedHead]
    /// With `resolving`: the documents the sync left in conflict that a resolver settled here.
    public var resolved: [DocumentKey] = []
    /// With `resolving`: the documents that still need a person.
    public var needsPerson: [DocumentKey] = []
    /// Objects and bytes received and sent, and documents adopted.
    public var traffic = SyncTraffic()
}

extension DocumentStore {
    /// Exchanges versions with another store: a path, `file://`, ssh or https URL, through libgit2's transport.
    ///
    /// Heads are unioned and heads another head descends from drop out, so a
    /// resolution made on either side settles the conflict on both, and the
    /// current version is the same everywhere. Only version refs travel: no
    /// config, attributes or driver comes from the other side.
    public func sync(with remote: String) throws(TruceError) -> SyncReport {
        try sync(with: remote, resolving: nil, device: "")
    }

    /// Exchanges versions with another store, then settles what stays in conflict with the resolvers that
    /// decide on their own, and sends those resolutions back in the same call.
    ///
    /// Resolutions are a function of the heads they settle, so when the other
    /// replica resolves the same conflict it writes the same commit: resolving
    /// after every sync converges. What needs a person is left as it is and
    /// reported in `needsPerson`. `progress` hears the running traffic, for a progress line.
    public func sync(with remote: String, resolving registry: ResolverRegistry?, device: String,
                     progress: (@Sendable (SyncTraffic) -> Void)? = nil) throws(TruceError) -> SyncReport {
        let meter = TrafficMeter(progress: progress)
        let localPath = Self.localPath(of: remote)
        var remoteStore: DocumentStore?
        if let localPath {
            do { remoteStore = try DocumentStore.open(at: localPath) } catch {
                throw .invalidRemote(remote, reason: error.errorDescription ?? "\(error)")
            }
        }
        let ours = try receive(from: remote, transfer: meter.received)
        meter.adopted(Set(ours.received.map(\.key)).count)
        var (sent, refusedThere) = try send(to: remote, store: remoteStore, meter: meter)
        var resolved: [DocumentKey] = [], needsPerson: [DocumentKey] = []
        if let registry {
            for (key, result) in try resolveAll(registry: registry, device: device).sorted(by: { $0.key < $1.key }) {
                if case .resolved = result { resolved.append(key) } else { needsPerson.append(key) }
            }
            if !resolved.isEmpty {
                let again = try send(to: remote, store: remoteStore, meter: meter)
                sent += again.sent
                refusedThere += again.refused
            }
        }
        var report = SyncReport(received: ours.received, sent: sent, inConflict: try documentsInConflict().map(\.key), refused: ours.refused,
                                refusedByRemote: refusedThere)
        (report.resolved, report.needsPerson, report.traffic) = (resolved, needsPerson, meter.traffic)
        return report
    }

    /// Gives the other side our versions: a store Truce can open takes them the way we took its (so its journal
    /// and events see them, and it checks them as we check its); any other remote gets a push.
    private func send(to remote: String, store remoteStore: DocumentStore?, meter: TrafficMeter) throws(TruceError)
        -> (sent: Int, refused: [RefusedHead]) {
        defer { meter.sendFinished() }
        guard let remoteStore else { return (try pushHeads(to: remote, transfer: meter.sending), []) }
        do {
            let theirs = try remoteStore.receive(from: path, transfer: meter.sending)
            return (theirs.received.count, theirs.refused)
        } catch .versionOfAnotherDocument(let id, let key, let actual) {
            throw .invalidRemote(remote, reason: "its head \(id.short) of '\(key.rawValue)' is a version of '\(actual)'")
        } catch .storeFailure(let error) {
            // Its files, not ours, failed (a store we may not write, its disk full): name it, as a refused push would.
            throw .invalidRemote(remote, reason: "it cannot take our versions: \(error.description)")
        }
    }

    /// Fetches the other store's heads and makes those this store lacks, and that pass the checks, local heads;
    /// returns the new versions and the heads refused.
    func receive(from remote: String, transfer: ((TransferCounts) -> Void)? = nil) throws(TruceError)
        -> (received: [Change], refused: [RefusedHead]) {
        let received = try withRepository { repository -> (received: [Change], refused: [RefusedHead]) in
            // Nothing from the other side is adopted unchecked: bad heads are refused by name, the good ones admitted.
            var refused: [RefusedHead] = []
            let byDirectory = try Self.fetchChecked(from: remote, into: repository, refused: &refused, progress: transfer)
            let syncLock = try Self.lockForAdopting(in: repository)
            defer { syncLock.release() }
            var received: [Change] = [], adopted: [(key: DocumentKey, heads: [VersionID])] = []
            for (directory, advertisedHeads) in byDirectory.sorted(by: { $0.key < $1.key }) {
                // Each head on its own: a version placed in another document's directory is refused, and it does not
                // take the real heads beside it down with it.
                let placed = try advertisedHeads.compactMap { id -> (key: DocumentKey, id: VersionID)? in
                    guard let key = try Self.documentKey(of: id, in: repository), ReferenceLayout.headsDirectory(of: key) == directory else { return nil }
                    return (key, id)
                }
                guard let key = placed.first?.key else { continue }
                let incoming = placed.map(\.id)
                let before = try Self.documentVersions(of: key, in: repository)
                let localHeads = before.heads.map(\.id)
                let new = try incoming.filter { id in
                    try !localHeads.contains { try $0 == id || repository.isDescendant($0, of: id) }
                }
                guard !new.isEmpty else { continue }
                // Every commit of this document the other store has and this one lacks, parents first.
                let arriving = try repository.walk(from: new, hiding: localHeads, oldestFirst: true)
                // Read before any head is adopted: a commit of another document in the history refuses the sync here.
                let changes: [Change]
                do {
                    changes = try arriving.map { try Self.change(recording: Self.readVersion($0, of: key, in: repository)) }
                } catch TruceError.versionOfAnotherDocument(let id, _, let actual) {
                    throw TruceError.invalidRemote(remote, reason: "its history of '\(key.rawValue)' holds \(id.short), which is not a version of it (\(actual))")
                }
                adopted.append((key, new))
                received += changes
            }
            try Self.publishJournaled(received, in: repository) {
                for (key, heads) in adopted {
                    for id in heads { try Self.publishHead(id, of: key, replacing: [], message: "truce: sync \(key.rawValue)", in: repository) }
                }
            }
            return (received, refused)
        }
        deliverEvents()
        return received
    }

    /// Pushes every head of this store to a remote Truce cannot open itself (git://, ssh, https); returns the heads it lacked.
    private func pushHeads(to remote: String, transfer: @escaping (TransferCounts) -> Void) throws(TruceError) -> Int {
        try withRepository { repository in
            let heads = try repository.references(matching: ReferenceLayout.allHeads).map(\.name)
            do { return try repository.push(heads, to: remote, progress: transfer) } catch let error as GitError {
                // The fetch went through by now: say that it is the push the hub refused (libgit2 says "status code: 403").
                throw TruceError.invalidRemote(remote, reason: "it refused our push: " + error.message)
            }
        }
    }

    /// The journal entry for a version: a save, a deletion or a resolution by its author.
    static func change(recording version: Version) -> Change {
        let kind: ChangeKind = version.isResolution ? .resolution : version.reopened != nil ? .reopen : version.isDeletion ? .delete : .save
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
