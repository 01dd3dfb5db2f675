import Foundation
internal import TruceGit

/// A hub's index of its replicas' manifests: one reference, `refs/truce/hub`, whatever the number of replicas.
///
/// git's protocol before v2 (all libgit2 1.5 speaks) lists every ref of the
/// remote on every fetch and push: with one ref per replica, each sync paid
/// for every replica that ever joined. The index is a manifest chain of its
/// own, in `ReplicaManifest`'s format with the hub's id as its replica: each
/// entry lists the previous one and the manifest a replica pushed, and a
/// snapshot lists the newest manifest of every replica the hub keeps (written
/// when the chain since the last lists as many as it did, and when a
/// replica is forgotten). A reader walks from the tip back to the entry it
/// read last, so what it reads follows the change. Every push moves the one
/// ref, compare-and-swap against the value the hub advertised: of two
/// replicas pushing at once, one is refused, reads again and pushes again.
///
/// A store keeps the entry it read last of each hub as
/// `refs/truce/hubs/<hub id>/<manifest>-<journal>`: `<manifest>` is the
/// manifest of its own that the hub lists at that entry, and `<journal>` the
/// entry of its change journal up to which the hub holds every version it
/// recorded (`none` for none). Whether it must push again is then known
/// without reading the chain: a replica that only receives pushes nothing.
enum HubIndex {
    static let reference = "refs/truce/hub"
    static let copiesRoot = "refs/truce/hubs/"
    static let title = "Hub index"

    /// The name of this store's copy of hub `hub`'s index, at an entry that lists `ours` (this store's manifest) and
    /// holds every version this store's change journal records up to `journal`.
    static func copy(of hub: String, listing ours: ObjectID?, holdingUpTo journal: ObjectID?) -> String {
        copiesRoot + hub + "/" + (ours?.hex ?? "none") + "-" + (journal?.hex ?? "none")
    }

    /// This store's copy of hub `hub`'s index, with what the hub holds of ours there; nil when there is none.
    static func copy(of hub: String, in repository: Repository) throws -> HubIndexView.Copy? {
        let prefix = copiesRoot + hub + "/"
        func id(_ text: Substring) -> ObjectID?? { text == "none" ? .some(nil) : ObjectID(hex: String(text)).map { .some($0) } }
        for reference in try repository.references(under: prefix) {
            let fields = reference.name.dropFirst(prefix.count).split(separator: "-", omittingEmptySubsequences: false)
            guard fields.count == 2, let ours = id(fields[0]), let journal = id(fields[1]) else { continue }
            return .init(name: reference.name, target: reference.target, ours: ours, journal: journal)
        }
        return nil
    }

    /// Reads the index the hub advertises at `tip` (downloaded into `incoming`) after this store's copy; the reason when
    /// it is not an index this store can read.
    static func read(_ tip: ObjectID, in incoming: Repository, store: Repository) throws -> Result<HubIndexView, ReplicaManifest.ManifestProblem> {
        guard try incoming.containsCommit(tip) else { return .failure(.init("its index did not arrive")) }
        guard let header = ReplicaManifest.header(parsing: try incoming.readCommit(tip).message) else {
            return .failure(.init("\(tip.short) is not a hub index"))
        }
        let copy = try Self.copy(of: header.replica, in: store)
        guard copy?.target != tip else {
            return .success(HubIndexView(hub: header.replica, tip: tip, header: header, copy: copy, listed: [], isComplete: false, commits: []))
        }
        switch try ReplicaManifest.listing(from: tip, after: copy?.target, replica: header.replica, in: incoming) {
        case .failure(let problem): return .failure(problem)
        case .success(let listing):
            guard listing.heads.isEmpty else { return .failure(.init("\(tip.short) lists versions, where an index lists manifests")) }
            return .success(
                HubIndexView(
                    hub: header.replica, tip: tip, header: header, copy: copy, listed: listing.manifests, isComplete: listing.reachedSnapshot,
                    commits: listing.commits))
        }
    }

    /// The newest manifest of each replica the index at `tip` lists, back to its snapshot; nil when a commit of it is
    /// not an entry of hub `hub`.
    static func manifests(at tip: ObjectID, hub: String, in repository: Repository) throws -> [String: ObjectID]? {
        guard case .success(let listing) = try ReplicaManifest.listing(from: tip, after: nil, replica: hub, in: repository) else { return nil }
        var newest: [String: (id: ObjectID, sequence: Int)] = [:]
        for (replica, id) in listing.manifests where newest[replica]?.id != id {
            let sequence = try IncomingCheck.sequence(of: id, in: repository)
            if sequence > newest[replica]?.sequence ?? -1 { newest[replica] = (id, sequence) }
        }
        return newest.mapValues(\.id)
    }

    /// The entry that follows `view`'s tip and lists `manifest`; a snapshot of every replica's newest manifest once
    /// the chain since the last lists as many as that one did (or `floor`, when it listed fewer): a newcomer then reads
    /// at most twice the replicas' manifests, and a push lists one more manifest in a snapshot, counted over the pushes.
    static func entry(
        after view: HubIndexView, listing manifest: ObjectID, of replica: String, floor: Int, in repository: Repository
    ) throws -> ManifestPlan {
        let header = view.header
        let listed = header.listedSinceSnapshot + 1
        // The chain stays as it is, should it not read back to its snapshot here: a longer walk for a newcomer.
        guard listed > max(header.snapshotHeads, floor), var manifests = try Self.manifests(at: view.tip, hub: view.hub, in: repository)
        else {
            let next = ReplicaManifest.Header(
                replica: view.hub, sequence: header.sequence + 1, journal: nil, isSnapshot: false, listedSinceSnapshot: listed,
                snapshotHeads: header.snapshotHeads)
            return plan(previous: view.tip, parents: [view.tip, manifest], header: next)
        }
        manifests[replica] = manifest
        return snapshot(of: view.hub, after: view.tip, sequence: header.sequence + 1, listing: manifests)
    }

    /// A snapshot of hub `hub`'s index listing `manifests`, following `previous` (nil for a hub without one).
    static func snapshot(of hub: String, after previous: ObjectID?, sequence: Int, listing manifests: [String: ObjectID]) -> ManifestPlan {
        let next = ReplicaManifest.Header(
            replica: hub, sequence: sequence, journal: nil, isSnapshot: true, listedSinceSnapshot: 0, snapshotHeads: manifests.count)
        return plan(previous: previous, parents: manifests.sorted { $0.key < $1.key }.map(\.value), header: next)
    }

    private static func plan(previous: ObjectID?, parents: [ObjectID], header: ReplicaManifest.Header) -> ManifestPlan {
        let now = Signature(name: "truce", email: "manifest@truce", time: Int64(Date().timeIntervalSince1970), offsetMinutes: 0)
        var plan = ManifestPlan(name: reference, previous: previous, next: (parents, header, now))
        plan.title = title
        return plan
    }
}

/// What one sync read of a hub's index: its tip, this store's copy, and what the entries between them list.
struct HubIndexView: Sendable {
    /// This store's copy of a hub's index: the entry read last, the manifest of this store it lists there, and the
    /// entry of this store's journal up to which the hub holds every version recorded.
    struct Copy: Sendable {
        let name: String
        let target: ObjectID
        let ours: ObjectID?
        let journal: ObjectID?
    }

    let hub: String
    /// The entry the hub advertised, and its header.
    let tip: ObjectID
    let header: ReplicaManifest.Header
    let copy: Copy?
    /// The manifests the entries after the copy list (back to the snapshot when `isComplete`), in the order listed.
    let listed: [(replica: String, id: ObjectID)]
    /// True when the walk reached a snapshot: `listed` is then everything the index lists.
    let isComplete: Bool
    /// The index's commits read (entries and their parts), which join the store so that the copy can point there.
    let commits: [ObjectID]

    /// The view once `entry`, with `header`, follows the tip and lists `manifest` of `replica` (among others, for a
    /// snapshot): what this sync pushed, without reading it back.
    func following(_ entry: ObjectID, header: ReplicaManifest.Header, listing manifest: ObjectID, of replica: String) -> HubIndexView {
        // A snapshot's other manifests are not listed here: the view says only what it knows, which is never complete.
        HubIndexView(
            hub: hub, tip: entry, header: header, copy: copy, listed: [(replica, manifest)] + listed, isComplete: false, commits: [])
    }

    /// Whether the index, at its tip, lists `manifest` (this store's); true for nil (nothing to list).
    func lists(_ manifest: ObjectID?) -> Bool {
        guard let manifest else { return true }
        if listed.contains(where: { $0.id == manifest }) { return true }
        return !isComplete && copy?.ours == manifest
    }

    /// Whether the index, at its tip, lists `manifest` of `replica` or a later manifest of it: what a push that relays it
    /// need not send again.
    func lists(_ manifest: ObjectID, of replica: String, in repository: Repository) throws -> Bool {
        let sequence = try IncomingCheck.sequence(of: manifest, in: repository)
        return try listed.contains { entry in
            try entry.replica == replica && (entry.id == manifest || IncomingCheck.sequence(of: entry.id, in: repository) >= sequence)
        }
    }
}
