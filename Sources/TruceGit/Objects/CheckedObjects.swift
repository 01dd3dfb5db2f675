/// The objects a sync's checks passed, each once, in the order the checks read them.
///
/// A copy takes them in that order: a head's commit, trees and blob, and the
/// heads the other store wrote together, sit together in its packs, so each
/// lookup finds its object where the one before was found (`PackEntries`). A
/// set alone would hand them out in hash order, scattered over every pack.
package struct CheckedObjects {
    /// The objects, first check first.
    package private(set) var inOrder: [ObjectID] = []
    private var members = Set<ObjectID>()

    package init(_ ids: some Sequence<ObjectID> = []) { insert(contentsOf: ids) }

    package var count: Int { inOrder.count }

    package func contains(_ id: ObjectID) -> Bool { members.contains(id) }

    /// Adds those of `ids` not checked already, in their order.
    package mutating func insert(contentsOf ids: some Sequence<ObjectID>) {
        for id in ids where members.insert(id).inserted { inOrder.append(id) }
    }

    /// Adds those `other` checked that were not checked here, in their order, growing once to hold them all: a first
    /// sync's batch of 65,536 heads checks just over 2^18 objects, which a doubling list held in room for twice as
    /// many.
    package mutating func insert(contentsOf other: CheckedObjects) {
        inOrder.reserveCapacity(inOrder.count + other.count)
        members.reserveCapacity(members.count + other.count)
        insert(contentsOf: other.inOrder)
    }
}
