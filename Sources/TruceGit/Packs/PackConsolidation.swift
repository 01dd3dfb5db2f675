import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The small packs single writes leave, folded into one when they grow many, as `git gc --auto` does.
///
/// Each save writes its objects as one small pack, synced with its index
/// and their directory (`FsyncCountTests` counts a save's syncs), where
/// loose objects would each cost two. Every pack costs a lookup in its
/// index for an object it lacks, so once there are more than
/// `smallPackLimit` of them, the writer that made the last one writes their
/// objects into one new pack (fsynced before anything is deleted) and then
/// deletes them. Nothing is lost at any point: until the delete, every object
/// is in both. A reader that listed a deleted pack and finds its object
/// missing there reloads the pack list, as libgit2 does on any miss.
package enum PackConsolidation {
    /// More small packs than this are folded into one; git's `gc.autoPackLimit` is 50.
    package static let smallPackLimit = 50
    /// A pack up to this size counts as small (a save's pack is a few KiB); larger ones, a sync's or prune's, stay.
    package static let smallPackBytes = 1 << 20

    /// Folds the store's small packs into one when they are more than `smallPackLimit`; returns how many were folded.
    ///
    /// Every write calls it, so it reads `objects/pack` alone, never the loose objects.
    @discardableResult
    package static func consolidateIfNeeded(in repository: Repository) throws(GitError) -> Int {
        let small = repository.packFiles().packs.filter { $0.size <= smallPackBytes }
        guard small.count > smallPackLimit else { return 0 }
        var objects = Set<ObjectID>()
        var folded: [String] = []
        for pack in small {
            // A pack another writer folded meanwhile is gone; its objects are in that writer's pack.
            guard let ids = repository.objectIDs(inPack: pack.path) else { continue }
            objects.formUnion(ids)
            folded.append(pack.path)
        }
        guard folded.count > 1 else { return 0 }
        _ = try repository.writePack(of: objects) { _, _ in }
        for pack in folded {
            let stem = String(pack.dropLast(".pack".count))
            // The index last: a pack without its index is invisible, an index without its pack would be an error to git.
            for suffix in [".rev", ".pack", ".idx"] { unlink(stem + suffix) }
        }
        DurableFiles.syncDirectory(repository.gitDirectory + "objects/pack")
        try repository.reloadObjectDatabase()
        return folded.count
    }
}
