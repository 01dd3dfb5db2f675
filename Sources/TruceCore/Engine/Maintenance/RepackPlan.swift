import Foundation
internal import TruceGit

/// Which packs prune keeps as they are and which objects it writes into a new one.
///
/// A pack that holds only reachable objects need not be written again. Prune
/// keeps such packs, biggest first, while each one kept is either large (as
/// big as a batch writes before it packs what it holds) or holds at least
/// twice what the packs after it and the loose objects add up to: the sizes
/// of the packs kept fall geometrically, so they stay few, and an object is
/// written again only once what came after it has grown to half its pack.
/// Small packs are written again (it costs milliseconds, and keeps a small
/// store in one pack). A prune after a few saves costs what they wrote, not
/// what the store holds; when what is left is exactly one pack (the one the
/// last prune wrote), nothing is written. When no pack is all reachable
/// (something went), every reachable object goes into one new pack.
struct RepackPlan {
    /// The packs (paths of `.pack` files) kept as they are.
    let kept: [String]
    /// The objects to write into a new pack; empty when the kept packs hold every reachable object.
    let toWrite: Set<ObjectID>

    /// The sizes, in objects, that decide what is kept.
    struct Limits {
        /// A pack smaller than this is written again rather than kept.
        var smallestKept = 1 << 12
        /// A pack this big is kept whatever follows it: a batch (an import) writes packs of this size as it goes.
        var large = ObjectStaging.spillLimit.objects
        /// The most packs a prune leaves: the packs it keeps and the one it writes.
        var packs = 64
    }

    /// The plan for `reachable`, given the paths of the store's packs.
    static func make(packs: [String], reachable: Set<ObjectID>, limits: Limits = Limits()) -> RepackPlan {
        var whole: [(path: String, objects: [ObjectID])] = []
        for pack in packs {
            guard let objects = PackIndex.objectIDs(ofPack: pack),
                !objects.isEmpty, objects.allSatisfy(reachable.contains)
            else { continue }
            whole.append((pack, objects))
        }
        // Biggest first; the path decides between packs of one size, so every run picks the same.
        whole.sort { ($0.objects.count, $1.path) > ($1.objects.count, $0.path) }
        // Packs of one store hold each object once, so their counts add up (a duplicate only lets the plan keep more).
        var left = reachable.count
        var keptCount = 0
        for pack in whole.prefix(limits.packs - 1) {
            let count = pack.objects.count
            left -= count
            guard count >= limits.smallestKept, count >= limits.large || count >= 2 * left else { break }
            keptCount += 1
        }
        let keptPacks = whole.prefix(keptCount)
        let rest = keptPacks.isEmpty ? reachable : Self.objects(in: reachable, outside: keptPacks.map(\.objects))
        let kept = keptPacks.map(\.path)
        // What is left may be a pack already, as the pack the last prune wrote is: then nothing needs writing.
        if !rest.isEmpty,
            let pack = whole.dropFirst(keptCount).first(where: { $0.objects.count == rest.count && $0.objects.allSatisfy(rest.contains) })
        {
            return RepackPlan(kept: kept + [pack.path], toWrite: [])
        }
        return RepackPlan(kept: kept, toWrite: rest)
    }

    /// The ids of `reachable` that none of `packs` (each an index's ids, which git sorts) lists.
    ///
    /// Removing the packs' ids from a copy of `reachable` held a second set of
    /// every reachable object, a few hundred MB at a million documents; a
    /// sorted array of them, walked beside each pack's sorted ids, is a third
    /// of that. An index out of order only makes an object look unlisted, and
    /// written once more.
    private static func objects(in reachable: Set<ObjectID>, outside packs: [[ObjectID]]) -> Set<ObjectID> {
        let sorted = reachable.sorted()
        var listed = [Bool](repeating: false, count: sorted.count)
        for ids in packs {
            var position = 0
            for id in ids {
                while position < sorted.count, sorted[position] < id { position += 1 }
                if position < sorted.count, sorted[position] == id { listed[position] = true }
            }
        }
        var rest = Set<ObjectID>()
        for (position, id) in sorted.enumerated() where !listed[position] { rest.insert(id) }
        return rest
    }
}
