import Foundation
internal import TruceGit

/// The replicas a store knows of, from its own manifest and its copies of the others'.
extension ReadSession {
    /// Every replica with a manifest here, the one that published most recently first (then by id); a manifest this
    /// store cannot read is left out.
    func replicas() throws -> [ReplicaSummary] {
        let own = try engine.existingReplicaID()
        var found: [ReplicaSummary] = []
        for reference in try repository.references(under: ReplicaManifest.root) {
            guard let commit = try? repository.readCommit(reference.target), let header = ReplicaManifest.header(parsing: commit.message)
            else { continue }
            found.append(
                ReplicaSummary(
                    id: header.replica, isThisStore: header.replica == own, manifests: header.sequence,
                    lastPublished: Date(timeIntervalSince1970: Double(commit.committer.time))))
        }
        return found.sorted { ($0.lastPublished, $1.id) > ($1.lastPublished, $0.id) }
    }
}
