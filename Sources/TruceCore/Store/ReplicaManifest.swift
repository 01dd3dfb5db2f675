import Foundation
internal import TruceGit

/// A replica's heads as git history a hub can hold: how sync learns what changed without listing every head.
///
/// Each replica keeps one reference, `refs/truce/replicas/<replica id>`, on
/// every hub it syncs with, so a hub advertises one ref per replica whatever
/// the store holds. It points at a chain of manifest commits with an empty
/// tree: the first parent is the replica's previous manifest, the others are
/// the heads of the documents that changed here since, and the manifests of
/// other replicas that received documents came through (so adopting a whole
/// hub lists one commit). A snapshot has no previous manifest and lists every
/// known replica's manifest and every head none of them lists; one is
/// written when the chain since the last one lists four times what that
/// snapshot did. Because the heads are parents, git reaches and transfers
/// them like any history, and the chain gives git's negotiation common
/// history to find: only new objects travel. A reader learns what is new by
/// walking back to the manifest it saw last.
enum ReplicaManifest {
    static let root = "refs/truce/replicas/"

    /// What a manifest commit records beside its parents.
    struct Header: Equatable {
        let replica: String
        /// One more than the previous manifest's: which of two manifests of a replica is newer.
        let sequence: Int
        /// The change-journal entry this manifest covers: the next one lists the documents changed after it.
        let journal: ObjectID?
        let isSnapshot: Bool
        /// Heads the manifests after the last snapshot listed, this one's included.
        let listedSinceSnapshot: Int
        /// Heads the last snapshot listed.
        let snapshotHeads: Int
    }

    static func reference(of replica: String) -> String { root + replica }

    /// The most parents a manifest commit has: more are grouped into part commits of at most this many.
    ///
    /// libgit2's history walks keep their queue as a list sorted by date, so
    /// one commit with 10,000 parents costs every walk that meets it (every
    /// fetch's negotiation, every push) time that grows with the square of that.
    static let fanOut = 64

    /// The signature of a part that lists `listed` (heads and manifests): a second older than the oldest of them.
    ///
    /// libgit2's walks take commits newest first from one list kept sorted by
    /// committer time, inserting each behind every commit as new or newer: a
    /// linear scan. A part as new as its manifest is taken up before any head,
    /// so a walk that reads the whole snapshot (the push of a new store's first
    /// manifest, prune's repack) piled up every head in that list, and heads
    /// saved in the same few seconds (an import) made each insert scan them
    /// all: O(n²), minutes at 100,000 heads. A part older than what it lists is
    /// taken up after them: its heads come in ahead of the remaining parts and
    /// leave at once, and the list stays short. Hiding stays exact: the parts
    /// above these (and a manifest) keep their own time, so reading them marks
    /// every listed head hidden before the walk reaches the heads, as before;
    /// a walk that hides a manifest then stops without taking up these parts.
    /// Not epoch 0: a manifest's own new parts would be the oldest commits of
    /// the walk that pushes them, which would then read all the history it
    /// hides before it stops. The time comes from what is listed, so a part
    /// has the same id wherever it is written.
    static func partSignature(listing listed: [ObjectID], in repository: Repository) throws -> Signature {
        let oldest = try listed.map { try repository.committerTime(of: $0) }.min() ?? 0
        // git's dates start at 0: a part of versions dated 1970 can only be as old as they are.
        return Signature(name: "truce", email: "manifest@truce", time: max(0, oldest - 1), offsetMinutes: 0)
    }

    static func partMessage(of replica: String) -> String {
        "Manifest part\n\nReplica: \(replica)\nPart: yes\n"
    }

    /// True for a commit message of a part that a manifest of `replica` lists.
    static func isPart(_ message: String, of replica: String) -> Bool {
        Array(message.utf8) == Array(partMessage(of: replica).utf8)
    }

    /// The replica a manifest reference names, nil unless the name is `refs/truce/replicas/<32 lowercase hex>`.
    static func replica(ofReference name: String) -> String? {
        guard name.hasPrefix(root) else { return nil }
        let id = String(name.dropFirst(root.count))
        return isReplicaID(id) ? id : nil
    }

    static func isReplicaID(_ text: String) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    static func message(_ header: Header) -> String {
        """
        Manifest

        Replica: \(header.replica)
        Sequence: \(header.sequence)
        Journal: \(header.journal?.hex ?? "none")
        Snapshot: \(header.isSnapshot ? "yes" : "no")
        Listed: \(header.listedSinceSnapshot)
        Snapshot-Heads: \(header.snapshotHeads)

        """
    }

    /// The header of a manifest commit's message; nil when it is not one.
    static func header(parsing message: String) -> Header? {
        let fields = MessageLines.trailers(of: message)
        guard let replica = fields["Replica"], isReplicaID(replica), let sequence = fields["Sequence"].flatMap({ Int($0) }),
            let journalText = fields["Journal"], let snapshot = fields["Snapshot"], snapshot == "yes" || snapshot == "no",
            let listed = fields["Listed"].flatMap({ Int($0) }), let snapshotHeads = fields["Snapshot-Heads"].flatMap({ Int($0) })
        else { return nil }
        let journal = journalText == "none" ? nil : ObjectID(hex: journalText)
        guard journalText == "none" || journal != nil else { return nil }
        return Header(
            replica: replica, sequence: sequence, journal: journal, isSnapshot: snapshot == "yes",
            listedSinceSnapshot: listed, snapshotHeads: snapshotHeads)
    }

    /// What a manifest chain lists: heads, and manifests of other replicas whose listings it takes over.
    struct Listing {
        var heads: [ObjectID] = []
        var manifests: [(replica: String, id: ObjectID)] = []
        /// The commits of the chain read (manifests and their parts), each with a header git fsck takes.
        var commits: [ObjectID] = []
    }

    /// What the chain from `tip` lists after `seen` (back to a snapshot when `seen` is not on it), in the order listed;
    /// fails with a reason when a commit of the chain is not a manifest of `replica`.
    ///
    /// A listed parent that is itself a manifest stands for everything its own
    /// chain lists: a replica lists the manifests it adopted from instead of
    /// the heads they brought, so a new replica's first manifest is one commit,
    /// not one parent per document.
    static func listing(from tip: ObjectID, after seen: ObjectID?, replica: String, in repository: Repository) throws
        -> Result<Listing, ManifestProblem>
    {
        var listing = Listing()
        var current: ObjectID? = tip
        while let id = current, id != seen {
            guard let raw = try repository.rawCommit(id) else { return .failure(ManifestProblem("\(id.short) is not a commit")) }
            if let problem = commitHeaderProblem(raw) { return .failure(ManifestProblem("\(id.short) is a commit git fsck refuses: \(problem)")) }
            let commit = try repository.readCommit(id)
            guard let header = header(parsing: commit.message), header.replica == replica else {
                return .failure(ManifestProblem("\(id.short) is not a manifest of replica \(replica)"))
            }
            listing.commits.append(id)
            var listed = Array((header.isSnapshot ? commit.parents[...] : commit.parents.dropFirst()).reversed())
            while let parent = listed.popLast() {
                // A head that did not arrive is listed all the same: the head checks refuse it by name.
                let listedCommit = try repository.rawCommitIfPresent(parent) != nil ? try repository.readCommit(parent) : nil
                if let listedCommit, isPart(listedCommit.message, of: replica) {
                    guard let raw = try repository.rawCommit(parent), commitHeaderProblem(raw) == nil else {
                        return .failure(ManifestProblem("part \(parent.short) of \(id.short) is a commit git fsck refuses"))
                    }
                    listing.commits.append(parent)
                    listed += listedCommit.parents.reversed()
                } else if let listedCommit, let nested = Self.header(parsing: listedCommit.message) {
                    listing.manifests.append((nested.replica, parent))
                } else {
                    listing.heads.append(parent)
                }
            }
            if header.isSnapshot { break }
            guard let previous = commit.parents.first else { return .failure(ManifestProblem("\(id.short) lists heads but no previous manifest")) }
            current = previous
        }
        return .success(listing)
    }

    /// Every head the chains of `manifests` list, through the manifests they list in turn, back to their snapshots.
    static func headsListed(byAll manifests: [ObjectID], in repository: Repository) throws -> Set<ObjectID> {
        var heads = Set<ObjectID>(), visited = Set<ObjectID>(), pending = manifests
        while let manifest = pending.popLast() {
            guard visited.insert(manifest).inserted, let header = header(parsing: try repository.readCommit(manifest).message),
                case .success(let listing) = try listing(from: manifest, after: nil, replica: header.replica, in: repository)
            else { continue }
            heads.formUnion(listing.heads)
            pending += listing.manifests.map(\.id)
        }
        return heads
    }

    /// Why a replica's manifest chain was refused.
    struct ManifestProblem: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }
}

extension DocumentStore {
    /// This store's replica id (`truce.replica` in its config), made on first use: a store made before manifests has none.
    static func replicaID(in repository: Repository) throws -> String {
        if let id = try existingReplicaID(in: repository) { return id }
        try repository.setConfig(replicaConfigName, to: newReplicaID())
        // Two processes may make one at once; both then use whichever the config kept.
        return try replicaID(in: repository)
    }

    static func existingReplicaID(in repository: Repository) throws -> String? {
        try repository.configEntries().last(where: { $0.isLocal && $0.name == replicaConfigName }).map(\.value).flatMap {
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
    static func manifestPlan(in repository: Repository) throws -> ManifestPlan? {
        let replica = try replicaID(in: repository)
        let name = ReplicaManifest.reference(of: replica)
        let previous = try repository.reference(name)
        let header = try previous.flatMap { ReplicaManifest.header(parsing: try repository.readCommit($0).message) }
        let journal = try repository.reference(ChangeJournal.reference)
        if let previous, let header, header.journal == journal { return ManifestPlan(name: name, previous: previous, next: nil) }
        // Documents changed here since the last manifest, and the manifests of other replicas received documents came through.
        var changes: (keys: Set<DocumentKey>, manifests: Set<ObjectID>)?
        if let header, let journal, let entries = try ChangeJournal.entries(from: journal, after: header.journal, in: repository) {
            let manifests = try Set(entries.compactMap(\.via)).filter { try repository.containsCommit($0) }
            changes = (Set(entries.filter { $0.via == nil || !manifests.contains($0.via!) }.map(\.change.key)), manifests)
        }
        if let header, let previous, let changes {
            // Heads, not refs: a save leaves the packed head it replaced, which its new head descends from.
            let heads = Array(
                Set(try changes.keys.flatMap { try independentHeads(headReferences(of: $0, in: repository).map(\.target), in: repository) })
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
                    next: ([previous] + heads + changes.manifests.sorted(), next, signature(of: replica)))
                if heads.isEmpty { plan.onlyRelays = changes.manifests.sorted() }
                return plan
            }
        }
        // A snapshot: the manifests of the other replicas known here, and every head none of them lists.
        let copies = try repository.references(under: ReplicaManifest.root).filter { $0.name != name }.map(\.target).sorted()
        let heads = try repository.references(under: ReferenceLayout.headsRoot).map(\.target)
        let unlisted: [ObjectID]
        if previous == nil, let journal, !copies.isEmpty, try ChangeJournal.everyChange(from: journal, cameThrough: Set(copies), in: repository) {
            // A replica whose every version came through the manifests it holds (a first sync) has no head they do not list.
            unlisted = []
        } else {
            let covered = try ReplicaManifest.headsListed(byAll: copies, in: repository)
            unlisted = Array(Set(heads).subtracting(covered)).sorted()
        }
        if previous == nil, unlisted.isEmpty, copies.isEmpty { return nil }
        let next = ReplicaManifest.Header(
            replica: replica, sequence: (header?.sequence ?? 0) + 1, journal: journal, isSnapshot: true,
            listedSinceSnapshot: 0, snapshotHeads: Set(heads).count)
        return ManifestPlan(name: name, previous: previous, next: (unlisted + copies, next, signature(of: replica)))
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
    let next: (parents: [ObjectID], header: ReplicaManifest.Header, signature: Signature)?
    /// When the new manifest lists no head, only other replicas' manifests (what this replica received): those.
    var onlyRelays: [ObjectID]?

    init(name: String, previous: ObjectID?, next: (parents: [ObjectID], header: ReplicaManifest.Header, signature: Signature)?) {
        (self.name, self.previous, self.next) = (name, previous, next)
    }

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

    /// Writes the new manifest's commit into `repository` (the same id wherever it is written) and returns it;
    /// `previous` when there is no new one.
    func write(in repository: Repository) throws -> ObjectID {
        guard let next else { return previous! }
        let tree = try repository.writeTree([])
        let fixed = next.header.isSnapshot ? [] : [next.parents[0]]
        var listed = Array(next.parents.dropFirst(fixed.count))
        // Grouped into parts until the manifest itself has at most `fanOut` parents; the same bytes give the same ids everywhere.
        var listsHeads = true
        while fixed.count + listed.count > ReplicaManifest.fanOut {
            listed = try stride(from: 0, to: listed.count, by: ReplicaManifest.fanOut).map { start in
                let group = Array(listed[start..<min(start + ReplicaManifest.fanOut, listed.count)])
                let signature = listsHeads ? try ReplicaManifest.partSignature(listing: group, in: repository) : next.signature
                return try repository.writeCommit(
                    tree: tree, parents: group, author: signature, committer: signature,
                    message: ReplicaManifest.partMessage(of: next.header.replica))
            }
            listsHeads = false
        }
        return try repository.writeCommit(
            tree: tree, parents: fixed + listed, author: next.signature,
            committer: next.signature, message: ReplicaManifest.message(next.header))
    }

    /// Writes the new manifest into the store and moves its reference there, unless another sync moved it meanwhile.
    func publish(in repository: Repository) throws {
        guard let next else { return }
        let manifest = try write(in: repository)
        do {
            try DocumentStore.withLockRetries(on: name, in: repository) {
                try repository.updateReference(name, to: manifest, expecting: previous, message: "truce: manifest \(next.header.sequence)")
            }
        } catch let error as GitError where error.isConcurrentModification {
            // Another sync published one meanwhile. The hub may hold this one: the next plan starts from that sync's and,
            // covering the same journal entries, lists all this one did.
        }
    }
}
