import Foundation
internal import TruceGit

/// What one `sync` exchanged.
public struct SyncReport: Sendable, Codable {
    /// Versions this store did not have before, oldest first.
    public let received: [Change]
    /// Versions the other store did not have before (for a store Truce can open; otherwise the heads pushed).
    public let sent: Int
    /// Documents in conflict here after the sync (and after resolving, with `resolving`).
    public let inConflict: [DocumentKey]
    /// Heads of the other store this store refused: they, or the history they bring, fail git's or Truce's checks.
    public let refused: [SyncReport.RefusedHead]
    /// Heads of this store the other store refused (for a store Truce can open).
    public let refusedByRemote: [SyncReport.RefusedHead]
    /// With `resolving`: the documents the sync left in conflict that a resolver settled here.
    public var resolved: [DocumentKey] = []
    /// With `resolving`: the documents that still need a person.
    public var needsPerson: [DocumentKey] = []
    /// Objects and bytes received and sent, and documents adopted.
    public var traffic = SyncReport.Traffic()
    /// The remote as messages show it: its URL without a password.
    public var remote = ""
}

extension DocumentStore {
    /// Exchanges versions with another store: a path, `file://`, ssh or https URL, through libgit2's transport.
    ///
    /// Heads are unioned and heads another head descends from drop out, so a
    /// resolution made on either side settles the conflict on both, and the
    /// current version is the same everywhere. Only version refs travel: no
    /// config, attributes or driver comes from the other side.
    public func sync(with remote: String) throws(TruceError) -> SyncReport {
        let exchange = try exchange(with: remote, progress: nil, cancellation: nil)
        return try report(of: exchange, resolved: [], needsPerson: [])
    }

    /// What the exchange of a sync did: what a resolving after it needs to send the resolutions back, and what the report says.
    ///
    /// Kept between the exchange, which runs on a thread of its own, and the
    /// resolving, which awaits resolvers, so the two halves of one sync share its hub state and traffic.
    struct Exchange: Sendable {
        let remote: String
        let remoteStore: DocumentStore?
        let meter: TrafficMeter
        let received: [Change]
        let refused: [SyncReport.RefusedHead]
        var hub: HubState
        var sent: Int
        var refusedThere: [SyncReport.RefusedHead]
    }

    /// The exchange of a `sync`: receive what the other side has, then send ours; stopping with `TruceError.cancelled`
    /// once `cancellation` is set: in the download (libgit2's transfer callback aborts it) or before adopting, which
    /// leaves the store as it was; or while sending after adopting, which keeps what was adopted, whole.
    func exchange(
        with remote: String, progress: (@Sendable (SyncReport.Traffic) -> Void)?, cancellation: Cancellation?
    ) throws(TruceError) -> Exchange {
        let meter = TrafficMeter(progress: progress)
        let localPath = Self.localPath(of: remote)
        var remoteStore: DocumentStore?
        if let localPath {
            do { remoteStore = try DocumentStore.open(at: localPath) } catch {
                if case .storeNotFound = error { throw .invalidRemote(remote, reason: error.errorDescription ?? "\(error)") }
                // A plain bare repository at a path is a hub like any other.
                guard (try? Repository.openBare(at: localPath)) != nil else {
                    throw .invalidRemote(remote, reason: "it is neither a Truce store nor a bare git repository")
                }
            }
        }
        let ours = try receive(from: remote, transfer: meter.received, cancellation: cancellation)
        meter.adopted(Set(ours.received.map(\.key)).count)
        var hub = ours.hub
        let (sent, refusedThere) = try send(to: remote, store: remoteStore, hub: &hub, meter: meter, cancellation: cancellation)
        return Exchange(
            remote: remote, remoteStore: remoteStore, meter: meter, received: ours.received, refused: ours.refused, hub: hub, sent: sent,
            refusedThere: refusedThere)
    }

    /// Sends the resolutions a resolving after `exchange` wrote, in the same sync.
    func sendAgain(_ exchange: inout Exchange, cancellation: Cancellation?) throws(TruceError) {
        let again = try send(to: exchange.remote, store: exchange.remoteStore, hub: &exchange.hub, meter: exchange.meter, cancellation: cancellation)
        exchange.sent += again.sent
        exchange.refusedThere += again.refused
    }

    /// The report of a sync whose exchange was `exchange`, and whose resolving settled `resolved`.
    func report(of exchange: Exchange, resolved: [DocumentKey], needsPerson: [DocumentKey]) throws(TruceError) -> SyncReport {
        var report = SyncReport(
            received: exchange.received, sent: exchange.sent, inConflict: try documentsInConflict().map(\.key), refused: exchange.refused,
            refusedByRemote: exchange.refusedThere)
        (report.resolved, report.needsPerson, report.traffic) = (resolved, needsPerson, exchange.meter.traffic)
        report.remote = RemoteURL.redactingPasswords(in: exchange.remote)
        return report
    }

    /// What a hub advertised and what of it this replica adopted: what the next push must change there.
    struct HubState: Sendable {
        var advertised: [String: ObjectID]
        var legacyReferences: [String]
    }

    /// Gives the other side our versions: our manifest, brought up to date, and what it lists that the other side lacks.
    ///
    /// A store Truce can open takes them the way we took its (so its journal
    /// and events see them, and it checks them as we check its); any other
    /// remote gets a push of our manifest, which also deletes the head refs
    /// of a hub from before manifests once our manifest lists their versions.
    private func send(
        to remote: String, store remoteStore: DocumentStore?, hub: inout HubState, meter: TrafficMeter, cancellation: Cancellation?
    ) throws(TruceError) -> (sent: Int, refused: [SyncReport.RefusedHead]) {
        defer { meter.sendFinished() }
        guard let remoteStore else {
            do {
                return (
                    try withOwnRepository {
                        try Self.pushManifest(to: remote, hub: &hub, from: $0, progress: meter.sending, cancellation: cancellation)
                    }, []
                )
            } catch .storeFailure(let error) {
                // The transfer callback stopped the push: the hub did not take our manifest, and this store keeps its old one.
                if cancellation?.isCancelled == true { throw .cancelled }
                // The fetch went through by now: say that it is the push the hub refused (libgit2 says "status code: 403").
                throw .invalidRemote(remote, reason: "it refused our push: " + error.message)
            }
        }
        do {
            let theirs = try remoteStore.receive(from: path, readingManifests: false, transfer: meter.sending, cancellation: cancellation)
            return (theirs.received.count, theirs.refused)
        } catch .versionOfAnotherDocument(let id, let key, let actual) {
            throw .invalidRemote(remote, reason: "its head \(id.short) of '\(key.rawValue)' is a version of '\(actual)'")
        } catch .storeFailure(let error) {
            // Its files, not ours, failed (a store we may not write, its disk full): name it, as a refused push would.
            throw .invalidRemote(remote, reason: "it cannot take our versions: \(error.description)")
        }
    }

    /// Pushes this replica's manifest, brought up to date, to a hub (and deletes the hub's head refs from before
    /// manifests that it now lists); returns how many versions the hub lacked.
    ///
    /// The push goes from a scratch repository that holds the new manifest:
    /// this store gets it only once the hub has taken it, so a refused or
    /// killed push leaves the store as it was.
    private static func pushManifest(
        to remote: String, hub: inout HubState, from repository: Repository,
        progress: @escaping (TransferCounts) -> Void, cancellation: Cancellation?
    ) throws -> Int {
        guard let plan = try manifestPlan(in: repository) else { return 0 }
        // What we received from this very hub needs no second trip there: the manifest waits for a change of our own,
        // or for another hub, and lists it then.
        if hub.legacyReferences.isEmpty, try plan.isNeedless(at: hub.advertised, in: repository) { return 0 }
        let scratch = try Quarantine(of: repository, outgoing: true)
        let manifest = try plan.write(in: scratch.repository)
        try scratch.repository.updateReference(plan.name, to: manifest, expecting: nil, message: "truce: manifest to push")
        let refspecs = (hub.advertised[plan.name] == manifest ? [] : ["+\(plan.name):\(plan.name)"]) + hub.legacyReferences.map { ":" + $0 }
        guard !refspecs.isEmpty else { return 0 }
        let known = try hub.advertised.values.filter { try scratch.repository.containsCommit($0) }
        let lacking = try scratch.repository.walk(from: [manifest], hiding: known).filter { id in
            VersionMessage(parsing: try scratch.repository.readCommit(id).message) != nil
        }.count
        try cancellation?.check()
        try scratch.repository.push(refspecs: refspecs, to: remote, progress: progress, cancellation: cancellation)
        try plan.publish(in: repository)
        hub.advertised[plan.name] = manifest
        hub.legacyReferences = []
        return lacking
    }

    /// Fetches what the other side's manifests list and this store lacks, makes those heads that pass the checks local
    /// heads, and remembers the manifests read; returns the new versions, the heads refused and what the hub advertised.
    func receive(
        from remote: String, readingManifests: Bool = true, transfer: ((TransferCounts) -> Void)? = nil, cancellation: Cancellation? = nil
    ) throws(TruceError) -> (received: [Change], refused: [SyncReport.RefusedHead], hub: HubState) {
        // The transfer and the checks run on a handle of their own: reads and saves meanwhile do not wait behind them.
        let received = try withOwnRepository { repository -> (received: [Change], refused: [SyncReport.RefusedHead], hub: HubState) in
            // Nothing from the other side is adopted unchecked: bad heads are refused by name, the good ones admitted.
            var refused: [SyncReport.RefusedHead] = []
            let incoming = try Self.fetchChecked(
                from: remote, into: repository, readingManifests: readingManifests,
                refused: &refused, progress: transfer, cancellation: cancellation)
            // A cancellation stops here too, before the lock: the objects admitted above are unreachable until heads
            // land, and prune takes them in time.
            try cancellation?.check()
            let syncLock = try Self.lockForAdopting(in: repository)
            defer { syncLock.release() }
            var received: [Change] = [], adopted: [(key: DocumentKey, heads: [VersionID], existing: [(name: String, target: ObjectID)])] = []
            var via: [VersionID: ObjectID] = [:]
            // Read under the lock: a store without heads (most of a first sync) has none to read per document.
            let storeHasHeads = try repository.mayHaveReferences(under: ReferenceLayout.headsRoot)
            for (key, listedHeads) in incoming.byKey.sorted(by: { $0.key < $1.key }) {
                // A document new here has no heads to read (most of an initial sync); the others are read whole, so damage shows.
                let existing = storeHasHeads ? try Self.headReferences(of: key, in: repository) : []
                let localHeads =
                    try existing.isEmpty
                    ? [] : Self.documentVersions(of: key, amongCandidates: existing.map(\.target), in: repository).heads.map(\.id.objectID)
                let new = try Self.independentHeads(listedHeads, in: repository).filter { id in
                    try !localHeads.contains { try $0 == id || repository.isDescendant($0, of: id) }
                }
                guard !new.isEmpty else { continue }
                // Every commit of this document the other store has and this one lacks, parents first: for a single new
                // version (most of an initial sync) the checks already read that it is the whole history.
                let arriving: [ObjectID]
                if localHeads.isEmpty, new.count == 1, incoming.versions[VersionID(new[0])]?.parents.isEmpty == true {
                    arriving = new
                } else {
                    arriving = try repository.walk(from: new, hiding: localHeads, oldestFirst: true)
                }
                // Read before any head is adopted: a commit of another document in the history refuses the sync here.
                let changes: [Change]
                do {
                    changes = try arriving.map(VersionID.init).map { id in
                        if let checked = incoming.versions[id], checked.key.hasBytes(of: key.rawValue) { return Self.change(recording: checked) }
                        return try Self.change(recording: Self.readVersion(id, of: key, in: repository))
                    }
                } catch TruceError.versionOfAnotherDocument(let id, _, let actual) {
                    throw TruceError.invalidRemote(
                        remote, reason: "its history of '\(key.rawValue)' holds \(id.short), which is not a version of it (\(actual))")
                }
                adopted.append((key, new.map(VersionID.init), existing))
                received += changes
                if let manifest = new.lazy.compactMap({ incoming.via[$0] }).first {
                    for change in changes { via[change.version] = manifest }
                }
            }
            // One transaction for the whole sync, not one per document: one journal append, one packed-refs rewrite.
            var transaction = try WriteTransaction(in: repository, objects: .stored)
            transaction.via = via
            for change in received { transaction.record(change) }
            for document in adopted {
                for head in document.heads {
                    transaction.publish(
                        PendingHead(
                            key: document.key, id: head, replacing: [], message: "truce: sync \(document.key.rawValue)", existing: document.existing))
                }
            }
            _ = try transaction.commit()
            // Only now: a sync killed before this point reads the same manifests again next time.
            var moving = incoming.manifests
            let fresh = moving.filter { $0.seen == nil }
            if fresh.count > 8 {
                // A new replica copies every other replica's manifest: one packed-refs rewrite, not a ref write (four
                // fsyncs) per copy. A copy another sync made meanwhile is kept, as the compare-and-swap below keeps it.
                let present = Set(try repository.references(under: ReplicaManifest.root).map(\.name))
                let copies = fresh.filter { !present.contains($0.name) }.map { (name: $0.name, target: $0.target) }
                try Self.withLockRetries(on: "packed-refs", in: repository) {
                    try PackedReferences.update(in: repository.gitDirectory, adding: copies, removing: [], keepingExisting: true)
                }
                moving.removeAll { $0.seen == nil }
            }
            for manifest in moving {
                do {
                    try repository.updateReference(manifest.name, to: manifest.target, expecting: manifest.seen, message: "truce: sync manifest")
                } catch let error as GitError where error.isConcurrentModification {
                    // Another sync moved this copy meanwhile; whichever is older is read again next time, which loses nothing.
                }
            }
            return (received, refused, HubState(advertised: incoming.advertised, legacyReferences: incoming.legacyReferences))
        }
        deliverEvents()
        return received
    }

    /// The journal entry for a version: a save, a deletion or a resolution by its author.
    static func change(recording version: Version) -> Change {
        let kind: Change.Kind = version.isResolution ? .resolution : version.reopened != nil ? .reopen : version.isDeletion ? .delete : .save
        return Change(kind: kind, key: version.key, version: version.id, author: version.deviceName, date: version.modificationDate)
    }

    /// The key a version commit (a version's or a head reference's target) names, nil for a commit that is not a Truce version.
    static func documentKey(of id: ObjectID, in repository: Repository) throws -> DocumentKey? {
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
