import Foundation
internal import TruceGit

/// What the other side of a sync advertised, and what of it this replica adopted: what the next push must change there.
struct HubState: Sendable {
    var advertised: [String: ObjectID]
    var legacyReferences: [String]
    /// The hub's index as read (`HubIndex`), when it has one; `indexIsHeld` once this store holds its tip, which an entry
    /// of ours can then follow (not after a refusal: the tip reaches what was refused).
    var index: HubIndexView? = nil
    var indexIsHeld = false
    /// The manifests the hub was seen to hold: its refs, and what the manifests read from them name.
    var named: Set<ObjectID> = []
}

/// What a receive adopted: the new versions, the heads refused, and the hub as it was seen.
struct Received: Sendable {
    let changes: ChangeList
    let refused: [SyncReport.RefusedHead]
    let hub: HubState
}

/// The receiving half of a sync: fetch into a quarantine, check, adopt what passes.
extension StoreEngine {
    /// Fetches what the other side's manifests list and this store lacks, makes those heads that pass the checks local
    /// heads, and remembers the manifests read; returns the new versions, the heads refused and what the hub advertised.
    ///
    /// Run it on an engine of its own (`StoreAccess.withOwnEngine`): the transfer and the checks then do not hold up reads
    /// and saves meanwhile.
    ///
    /// The heads listed are checked, admitted and adopted in batches
    /// (`Instrumentation.receiveBatchSize`, at most `localReceiveBatchSize`
    /// from a local store), each in one transaction, so that
    /// memory follows the batch and not the store. The manifests read are
    /// remembered only after the last: a sync stopped between batches keeps
    /// the batches adopted, whole, and the next one reads the same manifests
    /// again and adopts the rest.
    ///
    /// `environment` is what a download over ssh or http(s) may use from the machine; `transfer` hears the download's
    /// counts, `checking` the heads checked of those listed, `storing` the objects written into this store of those to
    /// write.
    func receive(
        from remote: String, readingManifests: Bool = true, environment: TransferEnvironment = .empty,
        transfer: ((TransferCounts) -> Void)? = nil, checking: ((Int, Int) -> Void)? = nil, storing: ((Int, Int) -> Void)? = nil,
        cancellation: Cancellation? = nil
    ) throws -> Received {
        // Nothing from the other side is adopted unchecked: bad heads are refused by name, the good ones admitted.
        var refused: [SyncReport.RefusedHead] = []
        var listing = try fetchListing(
            from: remote, readingManifests: readingManifests, environment: environment, refused: &refused, progress: transfer,
            cancellation: cancellation)
        var received = ChangeList(), legacyReferences: [String] = []
        // A download checked in one batch moves into the store as it came, and only then; a local store's objects are
        // copied either way, and in smaller batches for less memory at no cost (a first sync of 100,000 documents
        // peaked at 367 MB in one batch, 264 MB in two).
        let batchSize = instrumentation.receiveBatchSize
        let size = listing.quarantine.isBorrowing ? min(batchSize, Self.localReceiveBatchSize) : batchSize
        let count = listing.candidates.count
        // One batch at least: with no head to check, the manifests read are still remembered.
        var stored = 0
        for start in stride(from: 0, to: max(count, 1), by: size) {
            let batch = listing.candidates[start..<min(start + size, count)]
            let isLast = batch.endIndex == count
            var storedInBatch = 0
            let incoming = try checkAndAdmit(
                batch, isLast: isLast, of: &listing, refused: &refused, checking: checking,
                storing: storing.map { report in
                    { done, total in
                        storedInBatch = done
                        report(stored + done, stored + total)
                    }
                }, cancellation: cancellation)
            stored += storedInBatch
            legacyReferences += incoming.legacyReferences
            // A cancellation stops here too, before the lock: the objects admitted above are unreachable until heads
            // land, and prune takes them in time.
            try cancellation?.check()
            let syncLock = try lockForAdopting()
            defer { syncLock.release() }
            for change in try adopt(incoming, from: remote) { received.append(change) }
            if isLast { try remember(incoming.manifests) }
        }
        var hub = HubState(advertised: listing.advertised, legacyReferences: legacyReferences, index: listing.hubIndex, named: listing.named)
        if let index = listing.hubIndex, refused.isEmpty {
            // Its entries alone (they were checked as the listing read them), not what they reach: the copy points there.
            if try !repository.containsCommit(index.tip) { try listing.quarantine.packIntoStore(index.commits + [.emptyTree]) }
            hub.indexIsHeld = true
        }
        return Received(changes: received, refused: refused, hub: hub)
    }

    /// The most heads a receive from a local store checks, admits and adopts at a time.
    static let localReceiveBatchSize = 1 << 16

    /// Makes the heads of one checked batch local heads, in one transaction; returns the new versions. Called with the
    /// sync lock held.
    private func adopt(_ incoming: IncomingHeads, from remote: String) throws -> [Change] {
        var received: [Change] = [], adopted: [(key: DocumentKey, heads: [VersionID], existing: [(name: String, target: ObjectID)])] = []
        var via: [VersionID: ObjectID] = [:]
        // Read under the lock: a store without heads (most of a first sync) has none to read per document.
        let storeHasHeads = try repository.mayHaveReferences(under: ReferenceLayout.headsRoot)
        // The keys alone are sorted: sorting the (key, heads) pairs retained and released both at every move.
        let keys = incoming.byKey.keys.sorted()
        // A document new here has no heads to read (most of an initial sync); the others are read whole, so damage
        // shows. All of the batch's at once: one listing of loose heads and one look at packed-refs, not one per document.
        let existingByKey = storeHasHeads ? try headReferences(ofEach: keys) : nil
        for (index, key) in keys.enumerated() {
            let listedHeads = incoming.byKey[key, default: []]
            let existing = existingByKey?[index] ?? []
            let localHeads =
                try existing.isEmpty
                ? [] : documentVersions(of: key, amongCandidates: existing.map(\.target)).heads.map(\.id.objectID)
            let new = try independentHeads(listedHeads).filter { id in
                try !localHeads.contains { try $0 == id || repository.isDescendant($0, of: id) }
            }
            guard !new.isEmpty else { continue }
            // Every commit of this document the other store has and this one lacks, parents first: for a single new
            // version (most of an initial sync) the checks already read that it is the whole history.
            let arriving: [ObjectID]
            if localHeads.isEmpty, new.count == 1, incoming.versions[VersionID(new[0])]?.isFirstVersion == true {
                arriving = new
            } else {
                arriving = try repository.walk(from: new, hiding: localHeads, oldestFirst: true)
            }
            // Read before any head is adopted: a commit of another document in the history refuses the sync here.
            let changes: [Change]
            do {
                changes = try arriving.map(VersionID.init).map { id in
                    if let checked = incoming.versions[id]?.change, checked.key.hasBytes(of: key.rawValue) { return checked }
                    return try Change(recording: readVersion(id, of: key))
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
        guard !received.isEmpty else { return [] }
        // Before any head lands: saves here are dated after every version a head of this store reaches.
        if let newest = received.map(\.date).max() { try NewestAdoptedDate.raise(to: newest, in: repository) }
        // One transaction for the whole batch, not one per document: one journal append, one packed-refs rewrite.
        var transaction = try WriteSession(in: self, objects: .stored)
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
        return received
    }

    /// Moves this store's copies of other replicas' manifests to those read, once everything they list is adopted:
    /// a sync killed before this point reads the same manifests again next time. Called with the sync lock held.
    private func remember(_ manifests: [(name: String, target: ObjectID, seen: ObjectID?)]) throws {
        var moving = manifests
        let fresh = moving.filter { $0.seen == nil }
        if fresh.count > 8 {
            // A new replica copies every other replica's manifest: one packed-refs rewrite, not a ref write (four
            // fsyncs) per copy. A copy another sync made meanwhile is kept, as the compare-and-swap below keeps it.
            let present = Set(try repository.references(under: ReplicaManifest.root).map(\.name))
            let copies = fresh.filter { !present.contains($0.name) }.map { (name: $0.name, target: $0.target) }
            try repository.withLockRetries(on: "packed-refs") {
                try repository.updatePackedReferences(adding: copies, removing: [], keepingExisting: true)
            }
            moving.removeAll { $0.seen == nil }
        }
        for manifest in moving {
            do {
                // A sync killed while moving this copy left its lock: taken over once stale, as for every ref.
                try repository.withLockRetries(on: manifest.name) {
                    try repository.updateReference(manifest.name, to: manifest.target, expecting: manifest.seen, message: "truce: sync manifest")
                }
            } catch let error as GitError where error.isConcurrentModification {
                // Another sync moved this copy meanwhile; whichever is older is read again next time, which loses nothing.
            }
        }
    }
}
