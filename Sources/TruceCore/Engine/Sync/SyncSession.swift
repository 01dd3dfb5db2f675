import Foundation
internal import TruceGit

/// One sync with one remote, on an engine of its own: the receive, the push and the re-push after resolving share its
/// repository handle, its view of the hub and its traffic.
///
/// Used by one thread at a time (the `BlockingExecutor`'s, one step after
/// another, with the resolving awaited in between), which is what makes it
/// safe to hand between them.
final class SyncSession: @unchecked Sendable {
    let remote: String
    /// What the transfers may use from the machine: the caller's, never the process's.
    let environment: TransferEnvironment
    /// The other side, when it is a Truce store on a local path: it takes our versions the way we take its.
    private let remoteStore: StoreAccess?
    let engine: StoreEngine
    let meter: TrafficMeter
    private(set) var hub = HubState(advertised: [:], legacyReferences: [])
    /// The refs the other side advertised, as this session last saw them (after its own push, its manifest's new value).
    var hubAdvertised: [String: ObjectID] { hub.advertised }
    /// True when the other side is a Truce store on a local path, not a hub.
    var isRemoteStore: Bool { remoteStore != nil }
    private(set) var received = ChangeList()
    private(set) var refused: [SyncReport.RefusedHead] = []
    private(set) var sent = 0
    private(set) var refusedThere: [SyncReport.RefusedHead] = []
    /// Set when the other side is an encrypted hub's cache: what this session sends is sealed and pushed to the hub.
    var sealing: SealedSend?
    /// The remote the report names, when it is not `remote` (an encrypted hub's, not its cache's).
    var shownRemote: String?

    /// A session with `remote` (a path, `file://`, git://, ssh or http(s) URL) on `engine`, a handle of the sync's own;
    /// its fetch and push take keys, known hosts, CAs and passwords from `environment` alone. `meter`, when given, is
    /// one that counted transfers before this session (an encrypted hub's).
    init(
        remote: String, engine: StoreEngine, environment: TransferEnvironment, progress: (@Sendable (SyncReport.Traffic) -> Void)?,
        meter given: TrafficMeter? = nil
    ) throws(TruceError) {
        self.remote = remote
        self.engine = engine
        self.environment = environment
        meter = given ?? TrafficMeter(progress: progress, instrumentation: engine.instrumentation)
        guard let localPath = Self.localPath(of: remote) else {
            remoteStore = nil
            return
        }
        do {
            remoteStore = try StoreAccess(opening: localPath, savesThroughLog: nil, instrumentation: engine.instrumentation)
        } catch {
            if case .storeNotFound = error { throw .invalidRemote(remote, reason: error.errorDescription ?? "\(error)") }
            // A plain bare repository at a path is a hub like any other.
            guard (try? Repository.openBare(at: localPath)) != nil else {
                throw .invalidRemote(remote, reason: "it is neither a Truce store nor a bare git repository")
            }
            remoteStore = nil
        }
    }

    /// Receives what the other side has, then sends ours; stops with `TruceError.cancelled` once `cancellation` is set:
    /// in the download (libgit2's transfer callback aborts it) or before adopting, which leaves the store as it was;
    /// or while sending after adopting, which keeps what was adopted, whole.
    func exchange(cancellation: Cancellation?) throws(TruceError) {
        // A store on a local path may hold saves in its save log that its git does not show yet: land them first. One we
        // may not write keeps them; what its git holds is read all the same, and sending to it fails on its own.
        try? remoteStore?.landSaveLog()
        try receive(cancellation: cancellation)
        try send(cancellation: cancellation)
    }

    /// Receives what the other side has: adds to what this session received and refused, and reads the hub anew.
    private func receive(cancellation: Cancellation?) throws(TruceError) {
        let ours = try StoreAccess.asTruceErrors {
            try engine.receive(
                from: remote, environment: environment, transfer: meter.received, checking: meter.checking, storing: meter.storing,
                cancellation: cancellation)
        }
        received.append(contentsOf: ours.changes)
        refused += ours.refused
        hub = ours.hub
        meter.adopted(ours.changes.documentCount)
    }

    /// Gives the other side our versions: our manifest, brought up to date, and what it lists that the other side lacks.
    ///
    /// A store Truce can open takes them the way we took its (so its journal
    /// and events see them, and it checks them as we check its); any other
    /// remote gets a push of our manifest, which also deletes the head refs
    /// of a hub from before manifests once our manifest lists their versions.
    /// Called again after resolving, it sends the resolutions. When another
    /// replica moved the hub's index meanwhile, it receives again (what that
    /// replica pushed) and pushes again.
    func send(cancellation: Cancellation?) throws(TruceError) {
        defer { meter.sendFinished() }
        guard let remoteStore else {
            for attempt in 1...Self.pushAttempts {
                let pushed: Int?
                do {
                    pushed = try StoreAccess.asTruceErrors { try pushManifest(cancellation: cancellation) }
                } catch .storeFailure(let error) {
                    // The transfer callback stopped the push: the hub did not take our manifest, and this store keeps its old one.
                    if cancellation?.isCancelled == true { throw .cancelled }
                    // The fetch went through by now: say that it is the push the hub refused (libgit2 says "status code: 403").
                    throw .invalidRemote(shownRemote ?? remote, reason: "it refused our push: " + error.message)
                }
                if let pushed {
                    sent += pushed
                    return
                }
                guard attempt < Self.pushAttempts else { break }
                try receive(cancellation: cancellation)
            }
            throw .invalidRemote(
                shownRemote ?? remote, reason: "its index moved under each of our \(Self.pushAttempts) pushes (other replicas pushing); sync again")
        }
        do {
            let theirs = try remoteStore.receive(from: engine.repository.path, transfer: meter.sending, cancellation: cancellation)
            sent += theirs.changes.count
            refusedThere += theirs.refused
        } catch .versionOfAnotherDocument(let id, let key, let actual) {
            throw .invalidRemote(remote, reason: "its head \(id.short) of '\(key.rawValue)' is a version of '\(actual)'")
        } catch .storeFailure(let error) {
            // Its files, not ours, failed (a store we may not write, its disk full): name it, as a refused push would.
            throw .invalidRemote(remote, reason: "it cannot take our versions: \(error.description)")
        }
    }

    /// git's refspecs for `updates`: a deletion (`:name`) for no target, else the same name forced (`+name:name`); the
    /// push moves a ref only from the value expected, where one is.
    static func refspecs(_ updates: [(name: String, target: ObjectID?)]) -> [String] {
        updates.map { update in update.target == nil ? ":" + update.name : "+\(update.name):\(update.name)" }
    }

    /// How many times a push whose hub index another replica moved is tried, with a receive in between.
    static let pushAttempts = 8

    /// Pushes this replica's manifest, brought up to date, to a hub (and deletes the hub's head refs from before
    /// manifests that it now lists); returns how many versions the hub lacked, nil when another replica moved the hub's
    /// index meanwhile, which leaves the hub and this store as they were.
    ///
    /// The push goes from a scratch repository that holds the new manifest:
    /// this store gets it only once the hub has taken it, so a refused or
    /// killed push leaves the store as it was. A hub on a local path gets the
    /// objects it lacks as packs Truce writes there (`pushLocally`), the
    /// others through libgit2's push. On a hub with an index (`HubIndex`),
    /// the manifest is listed by a new entry of the index, which moves only
    /// from the value the hub advertised.
    ///
    /// `evenIfOnlyRelaying` pushes a manifest that lists only manifests the hub holds, which a sync leaves for later:
    /// what forgetting a replica needs, so that the manifests the hub keeps reach what that replica's listed.
    func pushManifest(cancellation: Cancellation?, evenIfOnlyRelaying: Bool = false) throws -> Int? {
        let repository = engine.repository
        let replica = try engine.replicaID()
        let usesIndex = try writesIndex()
        let journal = try repository.reference(ChangeJournal.reference)
        guard var plan = try engine.manifestPlan() else {
            if usesIndex { try keepIndexCopy(listing: nil, holdingUpTo: journal) }
            return 0
        }
        // What we received from this very hub needs no second trip there: the manifest waits for a change of our own,
        // or for another hub, and lists it then.
        if !evenIfOnlyRelaying, hub.legacyReferences.isEmpty, try isNeedless(plan) {
            if usesIndex { try keepIndexCopy(listing: plan.previous, holdingUpTo: journal) }
            return 0
        }
        let scratch = try Quarantine(of: repository, outgoing: true)
        let written = try plan.write(in: scratch.repository, readingHeadsFrom: repository)
        plan.forgetListed()
        let manifest = written.manifest
        try scratch.repository.updateReference(plan.name, to: manifest, expecting: nil, message: "truce: manifest to push")
        var updates: [(name: String, target: ObjectID?)] = hub.legacyReferences.map { ($0, nil) }
        var entry: (header: ReplicaManifest.Header, written: (manifest: ObjectID, objects: [ObjectID]))?
        if usesIndex {
            if hub.index?.lists(manifest) != true {
                let next = try indexEntry(listing: manifest, in: scratch.repository)
                let written = try next.plan.write(in: scratch.repository, readingHeadsFrom: repository)
                entry = (next.header, written)
                updates.append((HubIndex.reference, written.manifest))
            }
            // Our ref from before the index goes: the index lists our manifest.
            if hub.advertised[plan.name] != nil { updates.append((plan.name, nil)) }
        } else if hub.advertised[plan.name] != manifest {
            updates.append((plan.name, manifest))
        }
        // What the new manifest lists covers the journal as the plan read it (another sync may write more meanwhile).
        let covered = plan.next.map { $0.header.journal } ?? journal
        guard !updates.isEmpty else {
            // The hub has this very manifest (a sync killed after its push wrote it): this store takes it too.
            try plan.publish(in: repository, from: scratch, written: written)
            if usesIndex { try keepIndexCopy(listing: manifest, holdingUpTo: covered) }
            return 0
        }
        let tips = [entry?.written.manifest ?? manifest]
        if let entry {
            try scratch.repository.updateReference(HubIndex.reference, to: entry.written.manifest, expecting: nil, message: "truce: index")
        }
        // The index moves only from what the hub advertised: a replica that pushed meanwhile has its entry kept.
        let expected: [String: ObjectID?] = entry == nil ? [:] : [HubIndex.reference: hub.advertised[HubIndex.reference]]
        // Every commit a manifest reaches is a version, or a manifest or part of one: those have a Replica line. A
        // local push counts them as its walk reads them (a first push sends a hundred thousand).
        func versions(among commits: [ObjectID]) throws -> Int {
            try commits.count { id in VersionMessage(parsing: try scratch.repository.readCommit(id).message) != nil }
        }
        let isVersion: @Sendable (UnsafeRawBufferPointer) -> Bool = { message in !ReplicaManifest.hasReplicaLine(in: message) }
        let lacking: Int
        engine.instrumentation.willPush()
        do {
            if let sealing, let path = Self.localPath(of: remote) {
                try cancellation?.check()
                let pushed = try scratch.repository.pushLocally(
                    reachableFrom: [manifest], to: path, setting: [], copyingFrom: repository.gitDirectory + "objects",
                    packDirectory: try sealing.stagingDirectory(), cancellation: cancellation, counting: isVersion)
                try sealing.seal(packs: pushed.packs, manifest: manifest, cancellation: cancellation)
                lacking = pushed.counted
            } else if let path = Self.localPath(of: remote) {
                try cancellation?.check()
                let pushed = try scratch.repository.pushLocally(
                    reachableFrom: tips, to: path, setting: updates, expecting: expected, copyingFrom: repository.gitDirectory + "objects",
                    progress: meter.sending, cancellation: cancellation, counting: isVersion)
                lacking = pushed.counted
            } else {
                // What the index lists is on the hub too: named, the walk need not go down the index to find so.
                let listed = hub.index.map { index in index.listed.map(\.id) + (index.lists(plan.previous) ? [plan.previous].compactMap { $0 } : []) }
                let known = try (Array(hub.advertised.values) + (listed ?? [])).filter { try scratch.repository.containsCommit($0) }
                lacking = try versions(among: scratch.repository.walk(from: tips, hiding: known))
                try cancellation?.check()
                try scratch.repository.push(
                    refspecs: Self.refspecs(updates), to: remote, expecting: expected, environment: environment, progress: meter.sending,
                    cancellation: cancellation)
            }
        } catch let error as GitError where entry != nil && error.isConcurrentModification {
            return nil
        }
        try plan.publish(in: repository, from: scratch, written: written)
        hub.advertised[plan.name] = usesIndex ? nil : manifest
        hub.legacyReferences = []
        if let entry {
            try scratch.packIntoStore(entry.written.objects)
            hub.advertised[HubIndex.reference] = entry.written.manifest
            hub.index =
                hub.index.map { $0.following(entry.written.manifest, header: entry.header, listing: manifest, of: replica) }
                ?? HubIndexView(
                    hub: entry.header.replica, tip: entry.written.manifest, header: entry.header, copy: nil, listed: [(replica, manifest)],
                    isComplete: true, commits: [])
            hub.indexIsHeld = true
        }
        if usesIndex { try keepIndexCopy(listing: manifest, holdingUpTo: covered) }
        return lacking
    }

    /// The index entry that lists `manifest` after the hub's tip, and its header; the first entry of a new hub's index
    /// when it has none.
    private func indexEntry(listing manifest: ObjectID, in repository: Repository) throws -> (plan: ManifestPlan, header: ReplicaManifest.Header) {
        let replica = try engine.replicaID()
        let plan =
            try hub.index.map {
                try HubIndex.entry(after: $0, listing: manifest, of: replica, floor: engine.instrumentation.indexSnapshotFloor, in: repository)
            } ?? HubIndex.snapshot(of: StoreEngine.newReplicaID(), after: nil, sequence: 1, listing: [replica: manifest])
        // Every plan HubIndex makes has a next entry.
        return (plan, plan.next!.header)
    }

    /// Whether this push lists our manifest in the hub's index: a hub with an index this store holds, or one with no
    /// manifest of another replica (a new hub), not an encrypted hub's cache. A hub that keeps other replicas' manifests
    /// as refs and has no index stays as it is, for the replicas that read only those.
    private func writesIndex() throws -> Bool {
        guard sealing == nil else { return false }
        if hub.advertised[HubIndex.reference] != nil { return hub.index != nil && hub.indexIsHeld }
        let own = ReplicaManifest.reference(of: try engine.replicaID())
        return !hub.advertised.keys.contains { $0.hasPrefix(ReplicaManifest.root) && $0 != own }
    }

    /// True when the hub needs nothing of `plan`'s new manifest: it lists only manifests the hub holds already (or later
    /// ones of the same replicas), and the hub has this replica's previous one.
    private func isNeedless(_ plan: ManifestPlan) throws -> Bool {
        let repository = engine.repository
        guard let index = hub.index, hub.indexIsHeld else { return try plan.isNeedless(at: hub.advertised, in: repository) }
        guard var relays = plan.onlyRelays, index.lists(plan.previous) else { return false }
        // What the journal recorded up to the copy's entry of it, the hub holds: only the relays after it are looked up.
        if let held = index.copy?.journal, let journal = try repository.reference(ChangeJournal.reference),
            let entries = try ChangeJournal(repository: repository).entries(from: journal, after: held)
        {
            let vias = entries.map(\.via)
            guard !vias.contains(nil) else { return false }
            relays = Array(Set(vias.compactMap { $0 }))
        }
        return try relays.allSatisfy { relayed in
            // Named by what this sync read from the hub (another replica relaying it, most often): the hub has it.
            if hub.named.contains(relayed) { return true }
            guard let header = ReplicaManifest.header(parsing: try repository.readCommit(relayed).message) else { return false }
            return try index.lists(relayed, of: header.replica, in: repository)
        }
    }

    /// Moves this store's copy of the hub's index to the entry the hub advertises, which lists `ours` (this store's
    /// manifest) and holds every version this store's journal records up to `journal`: the next sync reads the index
    /// from there. Kept where it was when the hub has no index yet, when this store does not hold that entry, or when
    /// the index does not list `ours`.
    private func keepIndexCopy(listing ours: ObjectID?, holdingUpTo journal: ObjectID?) throws {
        guard let index = hub.index, hub.indexIsHeld, index.lists(ours) else { return }
        let repository = engine.repository
        let name = HubIndex.copy(of: index.hub, listing: ours, holdingUpTo: journal)
        let stale = try repository.references(under: HubIndex.copiesRoot + index.hub + "/").filter { $0.name != name }
        let current = try repository.reference(name)
        if current != index.tip {
            do {
                try repository.withLockRetries(on: name) {
                    try repository.updateReference(name, to: index.tip, expecting: current, message: "truce: hub index read")
                }
            } catch let error as GitError where error.isConcurrentModification {
                // Another sync moved it meanwhile: whichever is older is read from again next time, which loses nothing.
                return
            }
        }
        if !stale.isEmpty { try repository.deleteReferences(stale) }
    }

    /// The report of this sync, with what a resolving after it settled.
    func report(inConflict: [DocumentKey], resolved: [DocumentKey], needsPerson: [DocumentKey]) -> SyncReport {
        var report = SyncReport(
            received: received, sent: sent, inConflict: inConflict, refused: refused, refusedByRemote: refusedThere)
        (report.resolved, report.needsPerson, report.traffic) = (resolved, needsPerson, meter.traffic)
        report.remote = RemoteURL.redactingPasswords(in: shownRemote ?? remote)
        return report
    }

    /// The directory for a path or `file://` URL; nil for ssh, https and other transports.
    static func localPath(of remote: String) -> String? {
        if remote.hasPrefix("file://") { return URL(string: remote)?.path }
        if remote.contains("://") || remote.range(of: #"^[^/]+@[^/]+:"#, options: .regularExpression) != nil { return nil }
        return remote
    }
}

extension StoreAccess {
    /// Takes what the store at `remote` has that this one lacks, checked, on an engine of its own, and delivers the
    /// events; what a sync with this store as its local other side calls.
    func receive(
        from remote: String, transfer: ((TransferCounts) -> Void)?, cancellation: Cancellation?
    ) throws(TruceError) -> Received {
        let received = try withOwnEngine { engine in
            try engine.receive(from: remote, readingManifests: false, transfer: transfer, cancellation: cancellation)
        }
        deliverEvents()
        return received
    }
}
