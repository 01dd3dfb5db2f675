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
        let repository = engine.repository
        guard try StoreAccess.asTruceErrors({ try engine.existingReplicaID() }) != replica else {
            throw refuse("\(replica) is this store's own replica")
        }
        guard let manifest = hubAdvertised[name] else {
            // Forgotten there already (by another store): this store stops reading its copy too.
            guard let copy = try dropCopy(name) else { throw refuse("it holds no manifest of replica \(replica)") }
            return copy
        }
        // What this store received through that manifest, its own manifest lists once pushed: a sync leaves that for
        // its next change, forgetting cannot wait.
        var unreached = try unreached(from: manifest, name: name)
        if !unreached.isEmpty {
            _ = try StoreAccess.asTruceErrors { try pushManifest(cancellation: cancellation, evenIfOnlyRelaying: true) }
            unreached = try self.unreached(from: manifest, name: name)
        }
        if !unreached.isEmpty {
            throw refuse(
                "replica \(replica) lists \(unreached.count) version(s) no other replica's manifest on it reaches; "
                    + "forgetting it would lose them (sync a replica that adopts them, then forget it)")
        }
        try cancellation?.check()
        try StoreAccess.asTruceErrors {
            if let path = Self.localPath(of: remote) {
                try Repository.openBare(at: path).deleteReferences([(name, manifest)])
            } else {
                // A deletion sends no object: pushed from the store itself, which it leaves as it was.
                try repository.push(refspecs: [":" + name], to: remote, environment: environment, cancellation: cancellation)
            }
        }
        // This store stops reading it too; other stores keep their copies, and no longer find it on the hub.
        _ = try dropCopy(name)
        return manifest
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

    /// The versions `manifest` (the hub's `name`) reaches that no other manifest the hub holds does.
    private func unreached(from manifest: ObjectID, name: String) throws(TruceError) -> [ObjectID] {
        let repository = engine.repository
        return try StoreAccess.asTruceErrors {
            // What this store refused or never read cannot be shown to be reached: it counts as unreached.
            guard try repository.containsCommit(manifest) else { return [manifest] }
            let kept = try hubAdvertised.filter { $0.key != name && $0.key.hasPrefix(ReplicaManifest.root) }.map(\.value)
                .filter { try repository.containsCommit($0) }
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
