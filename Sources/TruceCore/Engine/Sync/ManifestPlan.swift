import Foundation
internal import TruceGit

/// This replica's id, and the manifest it publishes on the hubs it syncs with.
extension StoreEngine {
    /// This store's replica id (`truce.replica` in its config), made on first use: a store made before manifests has none.
    func replicaID() throws -> String {
        if let id = try existingReplicaID() { return id }
        try repository.setConfig(Self.replicaConfigName, to: Self.newReplicaID())
        // Two processes may make one at once; both then use whichever the config kept.
        return try replicaID()
    }

    func existingReplicaID() throws -> String? {
        try repository.configEntries().last(where: { $0.isLocal && $0.name == Self.replicaConfigName }).map(\.value).flatMap {
            ReplicaManifest.isReplicaID($0) ? $0 : nil
        }
    }

    static let replicaConfigName = "truce.replica"

    static func newReplicaID() -> String { UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "") }

    /// The manifest this replica would publish now; nil for a store without heads and without a manifest.
    ///
    /// The documents to list are those the change journal records after the
    /// entry the last manifest covered, so the work follows the changes. A
    /// store without a manifest (a new one, or one made before manifests)
    /// gets a snapshot. Nothing is written: a sync writes the manifest only
    /// once the hub has taken it, so a refused push leaves this store as it was.
    func manifestPlan() throws -> ManifestPlan? {
        let replica = try replicaID()
        let name = ReplicaManifest.reference(of: replica)
        let previous = try repository.reference(name)
        let header = try previous.flatMap { ReplicaManifest.header(parsing: try repository.readCommit($0).message) }
        let journal = try repository.reference(ChangeJournal.reference)
        if let previous, let header, header.journal == journal { return ManifestPlan(name: name, previous: previous, next: nil) }
        // Documents changed here since the last manifest, and the manifests of other replicas received documents came through.
        var changes: (keys: Set<DocumentKey>, manifests: Set<ObjectID>)?
        if let header, let journal, let entries = try ChangeJournal(repository: repository).entries(from: journal, after: header.journal) {
            let manifests = try Set(entries.compactMap(\.via)).filter { try repository.containsCommit($0) }
            changes = (Set(entries.filter { $0.via == nil || !manifests.contains($0.via!) }.map(\.change.key)), manifests)
        }
        if let header, let previous, let changes {
            // Heads, not refs: a save leaves the packed head it replaced, which its new head descends from.
            let heads = Array(
                Set(try changes.keys.flatMap { try independentHeads(headReferences(of: $0).map(\.target)) })
            )
            .sorted()
            let listed = header.listedSinceSnapshot + heads.count + changes.manifests.count
            // A new snapshot once the chain since the last one lists several times what it did: a replica that reads the
            // chain from scratch then reads a few times the store's heads, and snapshots cost a few heads per change.
            if listed <= 4 * max(header.snapshotHeads, 100) {
                let next = ReplicaManifest.Header(
                    replica: replica, sequence: header.sequence + 1, journal: journal, isSnapshot: false,
                    listedSinceSnapshot: listed, snapshotHeads: header.snapshotHeads)
                var plan = ManifestPlan(
                    name: name, previous: previous,
                    next: ([previous] + heads + changes.manifests.sorted(), next, Self.signature(of: replica)))
                if heads.isEmpty { plan.onlyRelays = changes.manifests.sorted() }
                return plan
            }
        }
        // A snapshot: the manifests of the other replicas known here, and every head none of them lists.
        let copies = try repository.references(under: ReplicaManifest.root).filter { $0.name != name }.map(\.target).sorted()
        // Sorted in place: counting them distinct then needs no set of a million ids beside them.
        var heads = try repository.referenceTargets(under: ReferenceLayout.headsRoot)
        heads.sort()
        let distinctHeads = heads.indices.count { $0 == 0 || heads[$0] != heads[$0 - 1] }
        let unlisted: [ObjectID]
        var listed = copies
        if previous == nil, let journal, !copies.isEmpty,
            let through = try ChangeJournal(repository: repository).manifests(from: journal, where: try isHeld(among: copies))
        {
            // A replica whose every version came through the manifests it holds (a first sync) has no head they do not
            // list, and lists those manifests alone: listing every replica's made each newcomer's first manifest, and
            // the hub, grow with the number of replicas before it, and every sync that hides them walk them all.
            unlisted = []
            listed = through.sorted()
        } else {
            let covered = try ReplicaManifest.headsListed(byAll: copies, in: repository)
            unlisted = Array(Set(heads).subtracting(covered)).sorted()
        }
        if previous == nil, unlisted.isEmpty, listed.isEmpty { return nil }
        let next = ReplicaManifest.Header(
            replica: replica, sequence: (header?.sequence ?? 0) + 1, journal: journal, isSnapshot: true,
            listedSinceSnapshot: 0, snapshotHeads: distinctHeads)
        return ManifestPlan(name: name, previous: previous, next: (unlisted + listed, next, Self.signature(of: replica)))
    }

    /// Whether a manifest is one of `copies` or an earlier one of a replica whose copy is at least as late: a first sync
    /// through a hub's index reads each replica's manifests since its snapshot, and a version may be listed first by an
    /// earlier one than the copy kept.
    private func isHeld(among copies: [ObjectID]) throws -> (ObjectID) throws -> Bool {
        var sequences: [String: Int] = [:]
        for copy in copies {
            guard let header = ReplicaManifest.header(parsing: try repository.readCommit(copy).message) else { continue }
            sequences[header.replica] = max(sequences[header.replica] ?? -1, header.sequence)
        }
        let copies = Set(copies)
        // A manifest is named by every journal entry that came through it: each is read once.
        var verdicts: [ObjectID: Bool] = [:]
        return { [repository] manifest in
            if copies.contains(manifest) { return true }
            if let verdict = verdicts[manifest] { return verdict }
            let header = ReplicaManifest.header(parsing: try repository.readCommit(manifest).message)
            let verdict = header.map { $0.sequence <= sequences[$0.replica] ?? -1 } ?? false
            verdicts[manifest] = verdict
            return verdict
        }
    }

    private static func signature(of replica: String) -> Signature {
        Signature(name: "truce", email: "manifest@truce", time: Int64(Date().timeIntervalSince1970), offsetMinutes: 0)
    }
}

/// This replica's manifest as it stands, or the one to write next: its reference, the last one, and the new one's parts.
struct ManifestPlan {
    let name: String
    let previous: ObjectID?
    /// Nil when `previous` is up to date.
    private(set) var next: (parents: [ObjectID], header: ReplicaManifest.Header, signature: Signature)?
    /// When the new manifest lists no head, only other replicas' manifests (what this replica received): those.
    var onlyRelays: [ObjectID]?
    /// The first line of the new manifest's message.
    var title = "Manifest"

    init(name: String, previous: ObjectID?, next: (parents: [ObjectID], header: ReplicaManifest.Header, signature: Signature)?) {
        (self.name, self.previous, self.next) = (name, previous, next)
    }

    /// Lets go of what the new manifest lists, once it is written (`write`): publishing it needs its header alone, and
    /// a first push of a million documents held a million heads' ids to its end (24 MB).
    mutating func forgetListed() { next?.parents = [] }

    /// True when a hub that advertises `advertised` needs nothing of the new manifest: it lists only manifests the
    /// hub holds already (or later ones of the same replicas), and the hub has this replica's previous one.
    func isNeedless(at advertised: [String: ObjectID], in repository: Repository) throws -> Bool {
        guard let onlyRelays, let previous, advertised[name] == previous else { return false }
        return try onlyRelays.allSatisfy { relayed in
            guard let header = ReplicaManifest.header(parsing: try repository.readCommit(relayed).message),
                let there = advertised[ReplicaManifest.reference(of: header.replica)], try repository.containsCommit(there)
            else { return false }
            return try there == relayed || (ReplicaManifest.header(parsing: repository.readCommit(there).message)?.sequence ?? 0) >= header.sequence
        }
    }

    /// Writes the new manifest's commit into `repository` (the same id wherever it is written) and returns it, with
    /// every object written for it (its empty tree, its parts, itself); `previous` and none when there is no new one.
    /// The heads it lists are read from `store`'s packs (`repository` is a scratch one that reads them through it).
    func write(in repository: Repository, readingHeadsFrom store: Repository) throws -> (manifest: ObjectID, objects: [ObjectID]) {
        guard let next else { return (previous!, []) }
        let tree = try repository.writeEmptyTree()
        var objects = [tree]
        let fixed = next.header.isSnapshot ? [] : [next.parents[0]]
        var listed = Array(next.parents.dropFirst(fixed.count))
        // Grouped into parts until the manifest itself has at most `fanOut` parents; the same bytes give the same ids
        // everywhere. Every parent is a head or part read or written just now: none is looked up again.
        var listsHeads = true
        // The heads' dates date the parts that list them: all read at once, in the order the packs hold them.
        let headTimes = fixed.count + listed.count > ReplicaManifest.fanOut ? try store.committerTimes(of: listed) : []
        while fixed.count + listed.count > ReplicaManifest.fanOut {
            listed = try stride(from: 0, to: listed.count, by: ReplicaManifest.fanOut).map { start in
                let end = min(start + ReplicaManifest.fanOut, listed.count)
                let group = Array(listed[start..<end])
                let signature = listsHeads ? ReplicaManifest.partSignature(listing: headTimes[start..<end]) : next.signature
                let part = try repository.writeCommit(
                    tree: tree, knownParents: group, author: signature, committer: signature,
                    message: ReplicaManifest.partMessage(of: next.header.replica))
                objects.append(part)
                return part
            }
            listsHeads = false
        }
        let manifest = try repository.writeCommit(
            tree: tree, knownParents: fixed + listed, author: next.signature,
            committer: next.signature, message: ReplicaManifest.message(next.header, title: title))
        return (manifest, objects + [manifest])
    }

    /// Brings the new manifest into the store from `scratch`, where `write` wrote it as `written`, as one pack, and
    /// moves its reference there, unless another sync moved it meanwhile.
    func publish(in repository: Repository, from scratch: Quarantine, written: (manifest: ObjectID, objects: [ObjectID])) throws {
        guard let next else { return }
        try scratch.packIntoStore(written.objects)
        let manifest = written.manifest
        do {
            try repository.withLockRetries(on: name) {
                try repository.updateReference(name, to: manifest, expecting: previous, message: "truce: manifest \(next.header.sequence)")
            }
        } catch let error as GitError where error.isConcurrentModification {
            // Another sync published one meanwhile. The hub may hold this one: the next plan starts from that sync's and,
            // covering the same journal entries, lists all this one did.
        }
    }
}
