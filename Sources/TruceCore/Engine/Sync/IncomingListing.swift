import Foundation
internal import TruceGit

/// What one fetch brought and its manifests list, before any head is checked: the heads to check, which `receive`
/// checks and adopts in batches (`Instrumentation.receiveBatchSize`), and what to remember once they are all in.
struct IncomingListing {
    /// The scratch repository the download waits in, until the last batch is in.
    let quarantine: Quarantine
    /// Every head listed, in the order listed, each once (a head ref however often it repeats).
    let candidates: IncomingCandidates
    /// Every ref under `refs/truce/` the other side advertised.
    let advertised: [String: ObjectID]
    /// Whether the other side is a Truce store: its head refs are its own, not a hub's to delete once adopted.
    let isTruceStore: Bool
    /// The replica manifests this store holds: every check and admit stops at what they reach.
    let known: [ObjectID]
    /// Whether this store had any head when the receive began (most of a first sync has none to look up).
    let storeHadHeads: Bool
    /// The manifests read, which this store keeps once every head they list is adopted, with the commits of their
    /// chains (manifests and parts) that the listing checked.
    let manifestsRead: [ObjectID]
    let chainCommits: [ObjectID]
    /// The newest manifest read per replica, which its copy here moves to once everything is adopted.
    let newest: [String: (target: ObjectID, seen: ObjectID?, sequence: Int)]
    /// The hub's index as read, when it has one (`HubIndex`): its entries' manifests are among those read.
    let hubIndex: HubIndexView?
    /// Every manifest the hub's refs and the manifests read from them name, read or not: what the hub holds.
    let named: Set<ObjectID>
    /// Heads refused so far, by the batches checked; of the heads head refs name, those accepted so far: a head
    /// listed twice is adopted once.
    var accepted = Set<ObjectID>(), rejected = Set<ObjectID>()
    /// The second handle on the quarantine that a first sync's checks use on a second thread, once made: one for all
    /// the batches.
    var secondReader: Repository?
}

extension StoreEngine {
    /// Fetches what the other side's replica manifests list and this store lacks into a quarantine, and reads what
    /// those manifests list; a manifest whose chain is damaged goes into `refused`.
    ///
    /// Head refs (`refs/truce/heads/…`) are listed too: a Truce store's own
    /// heads, or those a hub holds from before manifests. Without
    /// `readingManifests` only head refs are read: a store's heads hold all it
    /// took from manifests.
    func fetchListing(
        from remote: String, readingManifests: Bool, environment: TransferEnvironment = .empty, refused: inout [SyncReport.RefusedHead],
        progress: ((TransferCounts) -> Void)? = nil, cancellation: Cancellation? = nil
    ) throws -> IncomingListing {
        let replica = try existingReplicaID()
        let known = try repository.references(under: ReplicaManifest.root)
        let knownTargets = Dictionary(known.map { ($0.name, $0.target) }, uniquingKeysWith: { first, _ in first })
        // What the server holds of ours settles the negotiation: the index entries read last, when this store reads a
        // hub's index (they reach every manifest read there), else every manifest copy.
        let indexCopies = try repository.references(under: HubIndex.copiesRoot)
        let own = replica.map(ReplicaManifest.reference(of:))
        let offered = indexCopies.isEmpty ? known : indexCopies + known.filter { $0.name == own }
        let quarantine = try Quarantine(of: repository, offering: offered)
        let incoming = quarantine.repository
        let advertised: [(name: String, target: ObjectID)]
        do throws(GitError) {
            if let path = SyncSession.localPath(of: remote) {
                advertised = try quarantine.borrowObjects(of: path, refsMatching: "refs/truce/*")
            } else {
                advertised = try incoming.fetch(
                    from: remote, refsMatching: "refs/truce/*",
                    wanting: { advertised throws(GitError) in
                        var wanted: [String] = []
                        for reference in advertised {
                            let isListing =
                                (readingManifests && (reference.name.hasPrefix(ReplicaManifest.root) || reference.name == HubIndex.reference))
                                || reference.name.hasPrefix(ReferenceLayout.headsRoot)
                            if isListing, try !incoming.containsCommit(reference.target) { wanted.append(reference.name) }
                        }
                        return wanted
                    }, environment: environment, progress: progress, cancellation: cancellation)
            }
        } catch  where cancellation?.isCancelled == true {
            // The transfer callback stopped the download: nothing of it is adopted (the quarantine goes).
            throw TruceError.cancelled
        } catch  where error.message.contains(repository.gitDirectory) {
            // libgit2 names the file it failed to write: a file of this store (a full disk, say) is this store failing.
            throw TruceError.storeFailure(error)
        } catch {
            throw TruceError.invalidRemote(remote, reason: error.message)
        }
        if advertised.contains(where: { $0.name.hasPrefix(EncryptedHubCache.hubRoot) }) {
            // Never a plain sync with an encrypted hub: it would read nothing and send every version in the clear.
            throw TruceError.invalidRemote(
                remote, reason: "it is an encrypted hub, and this store has not joined it (truce hub join, then approve this device)")
        }
        let advertisedByName = Dictionary(advertised.map { ($0.name, $0.target) }, uniquingKeysWith: { first, _ in first })
        var candidates = IncomingCandidates()
        var newest: [String: (target: ObjectID, seen: ObjectID?, sequence: Int)] = [:]
        var read = Set<ObjectID>(), manifestsRead: [ObjectID] = [], chainCommits: [ObjectID] = []
        var pending: [(replica: String, target: ObjectID, name: String)] = [], named = Set<ObjectID>()
        for reference in advertised where readingManifests && reference.name.hasPrefix(ReplicaManifest.root) {
            guard let other = ReplicaManifest.replica(ofReference: reference.name) else {
                refused.append(
                    SyncReport.RefusedHead(
                        manifest: SyncReport.ManifestID(reference.target), reference: reference.name,
                        reason: "it is not a manifest reference Truce writes (refs/truce/replicas/<32 hex>)"))
                continue
            }
            pending.append((other, reference.target, reference.name))
        }
        // The hub's index lists the manifests pushed since this store read it last: read like any replica's.
        var hubIndex: HubIndexView?
        if readingManifests, let tip = advertisedByName[HubIndex.reference] {
            switch try HubIndex.read(tip, in: incoming, store: repository) {
            case .failure(let problem):
                refused.append(
                    SyncReport.RefusedHead(
                        manifest: SyncReport.ManifestID(tip), reference: HubIndex.reference, reason: "its index is damaged: \(problem.reason)"))
            case .success(let view):
                hubIndex = view
                chainCommits += view.commits
                pending += view.listed.reversed().map { ($0.replica, $0.id, ReplicaManifest.reference(of: $0.replica)) }
            }
        }
        while let item = pending.popLast() {
            guard read.insert(item.target).inserted else { continue }
            named.insert(item.target)
            // Our own manifest comes back as we pushed it; one we never wrote means a copy of this store syncs as the
            // same replica, and its heads are adopted like anyone's (its manifest is not kept: ours has that name).
            let isOurs = item.replica == replica
            if isOurs, try repository.containsCommit(item.target) { continue }
            let seen = isOurs ? nil : knownTargets[ReplicaManifest.reference(of: item.replica)]
            guard item.target != seen else { continue }
            guard try incoming.containsCommit(item.target) else {
                refused.append(
                    SyncReport.RefusedHead(manifest: SyncReport.ManifestID(item.target), reference: item.name, reason: "its manifest did not arrive"))
                continue
            }
            let sequence = try IncomingCheck.sequence(of: item.target, in: incoming)
            // We hold a later one, from elsewhere. One of the same sequence is not the same manifest: a sync killed
            // after its push and before it kept what it pushed writes the next one on the one before, with that
            // sequence again, and lists all the other listed and more.
            if let seen, try IncomingCheck.sequence(of: seen, in: incoming) > sequence { continue }
            switch try ReplicaManifest.listing(from: item.target, after: seen, replica: item.replica, in: incoming) {
            case .failure(let problem):
                refused.append(
                    SyncReport.RefusedHead(
                        manifest: SyncReport.ManifestID(item.target), reference: item.name, reason: "its manifest chain is damaged: \(problem.reason)"
                    ))
            case .success(let listing):
                chainCommits += listing.commits
                candidates.append(contentsOf: listing.heads, reference: item.name, legacy: false, via: isOurs ? nil : item.target)
                pending += listing.manifests.map { ($0.replica, $0.id, ReplicaManifest.reference(of: $0.replica)) }
                guard !isOurs else { continue }
                manifestsRead.append(item.target)
                if sequence > newest[item.replica]?.sequence ?? -1 { newest[item.replica] = (item.target, seen, sequence) }
            }
        }
        for reference in advertised where reference.name.hasPrefix(ReferenceLayout.headsRoot) {
            candidates.append(contentsOf: [reference.target], reference: reference.name, legacy: true, via: nil)
        }
        candidates.finish()
        return IncomingListing(
            quarantine: quarantine, candidates: candidates, advertised: advertisedByName,
            // A Truce store's head refs are its own; a hub's are what replicas pushed before manifests, and go once adopted.
            isTruceStore: advertisedByName.keys.contains(ChangeJournal.reference), known: known.map(\.target),
            storeHadHeads: try repository.mayHaveReferences(under: ReferenceLayout.headsRoot), manifestsRead: manifestsRead,
            chainCommits: chainCommits, newest: newest, hubIndex: hubIndex, named: named)
    }
}
