import Foundation
internal import TruceGit

/// Forgetting a retired replica: its manifest ref taken off the hub, once the manifests the hub keeps reach every
/// version it listed.
extension SyncSession {
    /// Removes `replica`'s manifest from the hub; call it after `exchange`, which adopted what that manifest lists and
    /// sent this store's manifest. Refused, with nothing changed on the hub, unless every version the manifest reaches
    /// is reached by the manifests the hub keeps (this store's among them), and for this store's own replica or a hub
    /// that is a Truce store (it keeps its own copies). Returns the manifest removed.
    ///
    /// A retired replica that syncs again publishes its manifest again, as a
    /// new replica would, and loses nothing it holds.
    func forget(_ replica: String, cancellation: Cancellation?) throws(TruceError) -> ObjectID {
        func refuse(_ reason: String) -> TruceError { .invalidRemote(remote, reason: reason) }
        guard !isRemoteStore else { throw refuse("it is a Truce store, which keeps the replicas it read; forget replicas on a hub") }
        let name = ReplicaManifest.reference(of: replica)
        guard try StoreAccess.asTruceErrors({ try engine.existingReplicaID() }) != replica else {
            throw refuse("\(replica) is this store's own replica")
        }
        if hub.index != nil, !hub.indexIsHeld {
            // What the index lists is then not all here: what this store refused may be that replica's alone.
            throw refuse(
                "this store refused part of what its index lists, which replica \(replica) may list; "
                    + "forgetting it would lose them (sync a replica that adopts them, then forget it)")
        }
        var onHub = try manifestsOnHub()
        guard let manifest = onHub[name] else {
            // Forgotten there already (by another store): this store stops reading its copy too.
            guard let copy = try dropCopy(name) else { throw refuse("it holds no manifest of replica \(replica)") }
            return copy
        }
        // What this store received through that manifest, its own manifest lists once pushed: a sync leaves that for
        // its next change, forgetting cannot wait.
        var unreached = try unreached(from: manifest, name: name, onHub: onHub)
        if !unreached.isEmpty {
            guard try StoreAccess.asTruceErrors({ try pushManifest(cancellation: cancellation, evenIfOnlyRelaying: true) }) != nil else {
                throw refuse("another replica pushed to it meanwhile; forget the replica again")
            }
            onHub = try manifestsOnHub()
            unreached = try self.unreached(from: manifest, name: name, onHub: onHub)
        }
        if !unreached.isEmpty {
            throw refuse(
                "replica \(replica) lists \(unreached.count) version(s) no other replica's manifest on it reaches; "
                    + "forgetting it would lose them (sync a replica that adopts them, then forget it)")
        }
        try cancellation?.check()
        try StoreAccess.asTruceErrors {
            if let index = hub.index, hub.indexIsHeld {
                try dropFromIndex(replica, index: index, onHub: onHub, cancellation: cancellation)
            } else if let path = Self.localPath(of: remote) {
                try Repository.openBare(at: path).deleteReferences([(name, manifest)])
            } else {
                // A deletion sends no object: pushed from the store itself, which it leaves as it was.
                try engine.repository.push(refspecs: [":" + name], to: remote, environment: environment, cancellation: cancellation)
            }
        }
        // This store stops reading it too; other stores keep their copies, and no longer find it on the hub.
        _ = try dropCopy(name)
        return manifest
    }

    /// Every replica's manifest on the hub, by the name of its ref: those its index lists (the newest of each replica)
    /// and those it keeps as refs, the newer of the two where both name one replica.
    private func manifestsOnHub() throws(TruceError) -> [String: ObjectID] {
        let repository = engine.repository
        return try StoreAccess.asTruceErrors {
            var found = hubAdvertised.filter { $0.key.hasPrefix(ReplicaManifest.root) }
            guard let index = hub.index, hub.indexIsHeld else { return found }
            guard let listed = try HubIndex.manifests(at: index.tip, hub: index.hub, in: repository) else {
                throw TruceError.invalidRemote(remote, reason: "its index \(index.tip.short) does not read back to a snapshot")
            }
            for (replica, id) in listed {
                let name = ReplicaManifest.reference(of: replica)
                if let ref = found[name], try repository.containsCommit(ref),
                    try IncomingCheck.sequence(of: ref, in: repository) > IncomingCheck.sequence(of: id, in: repository)
                {
                    continue
                }
                found[name] = id
            }
            return found
        }
    }

    /// Pushes a snapshot of the hub's index that lists every manifest `onHub` but `replica`'s, moving the index only
    /// from the value the hub advertised, and deletes `replica`'s ref there, if any.
    private func dropFromIndex(_ replica: String, index: HubIndexView, onHub: [String: ObjectID], cancellation: Cancellation?) throws {
        var kept: [String: ObjectID] = [:]
        for (name, id) in onHub {
            guard let other = ReplicaManifest.replica(ofReference: name), other != replica else { continue }
            kept[other] = id
        }
        let snapshot = HubIndex.snapshot(of: index.hub, after: index.tip, sequence: index.header.sequence + 1, listing: kept)
        let scratch = try Quarantine(of: engine.repository, outgoing: true)
        let written = try snapshot.write(in: scratch.repository, readingHeadsFrom: engine.repository)
        try scratch.repository.updateReference(HubIndex.reference, to: written.manifest, expecting: nil, message: "truce: index")
        let name = ReplicaManifest.reference(of: replica)
        let updates: [(name: String, target: ObjectID?)] =
            [(HubIndex.reference, written.manifest)] + (hubAdvertised[name] == nil ? [] : [(name, nil)])
        do {
            if let path = Self.localPath(of: remote) {
                try scratch.repository.pushLocally(
                    reachableFrom: [written.manifest], to: path, setting: updates, expecting: [HubIndex.reference: index.tip],
                    copyingFrom: engine.repository.gitDirectory + "objects", cancellation: cancellation)
            } else {
                try scratch.repository.push(
                    refspecs: Self.refspecs(updates), to: remote, expecting: [HubIndex.reference: index.tip], environment: environment,
                    cancellation: cancellation)
            }
        } catch {
            guard error.isConcurrentModification else { throw error }
            throw TruceError.invalidRemote(remote, reason: "another replica pushed to it meanwhile; forget the replica again")
        }
    }

    /// Deletes this store's copy of the manifest ref `name`; returns what it pointed at, nil when there was none.
    private func dropCopy(_ name: String) throws(TruceError) -> ObjectID? {
        let repository = engine.repository
        return try StoreAccess.asTruceErrors {
            guard let copy = try repository.reference(name) else { return nil }
            try repository.deleteReferences([(name, copy)])
            return copy
        }
    }

    /// The versions `manifest` (the hub's `name`) reaches that no other manifest on the hub (`onHub`) does.
    private func unreached(from manifest: ObjectID, name: String, onHub: [String: ObjectID]) throws(TruceError) -> [ObjectID] {
        let repository = engine.repository
        return try StoreAccess.asTruceErrors {
            // What this store refused or never read cannot be shown to be reached: it counts as unreached.
            guard try repository.containsCommit(manifest) else { return [manifest] }
            let kept = try onHub.filter { $0.key != name }.map(\.value).filter { try repository.containsCommit($0) }
            // Every commit the manifest reaches that none of the kept ones does: only versions count, not the manifests.
            do {
                return try repository.walk(from: [manifest], hiding: kept).filter { id in
                    VersionMessage(parsing: try repository.readCommit(id).message) != nil
                }
            } catch {
                return [manifest]
            }
        }
    }
}
