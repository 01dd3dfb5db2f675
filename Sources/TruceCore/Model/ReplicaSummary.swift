import Foundation

/// One replica a store knows of, as the newest manifest of it the store holds says: what
/// ``DocumentStore/replicas()`` lists.
///
/// A store keeps its own manifest and a copy of the newest one it read of every other replica on the hubs it syncs
/// with, so the list is every replica that ever published to them, as of this store's last sync.
public struct ReplicaSummary: Sendable, Hashable, Encodable {
    /// The replica's id (`truce.replica` in its store's config).
    public let id: String
    /// True for this store itself.
    public let isThisStore: Bool
    /// How many manifests the replica has published: one more for each sync that sent what changed there (its
    /// versions, or versions it received and passed on).
    public let manifests: Int
    /// When it published its newest manifest, by its own clock: the last sync of it that sent anything. A sync that
    /// brings nothing and sends nothing publishes none.
    public let lastPublished: Date

    init(id: String, isThisStore: Bool, manifests: Int, lastPublished: Date) {
        (self.id, self.isThisStore, self.manifests, self.lastPublished) = (id, isThisStore, manifests, lastPublished)
    }
}
