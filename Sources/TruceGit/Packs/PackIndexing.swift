internal import CLibgit2
import Foundation

/// A pack that arrived as bytes rather than through a fetch (an encrypted hub's entry, once opened), put into a
/// repository's object database by libgit2's indexer: every object is inflated and hashed, so an id in the index is
/// the hash of what the pack holds. What the objects name is not looked for here (see `indexPack`).
extension Repository {
    /// Indexes `pack` (a whole version 2 pack, deltas against its own objects only) into this repository's
    /// `objects/pack`; returns the ids of the objects it holds. A pack that is cut short or damaged fails, and leaves
    /// no file behind.
    @discardableResult
    package func indexPack(_ pack: [UInt8]) throws(GitError) -> [ObjectID] {
        var odb: OpaquePointer?
        try check(git_repository_odb(&odb, handle), "open object database")
        defer { git_odb_free(odb) }
        var indexer: OpaquePointer?
        var options = git_indexer_options()
        try check(git_indexer_options_init(&options, UInt32(GIT_INDEXER_OPTIONS_VERSION)), "prepare indexer")
        // No connectivity check: it asks the object database for every object each one names, a file system look
        // per object its packs lack, and the sync's own checks read every head's history and trees before adopting.
        options.verify = 0
        let directory = gitDirectory + "objects/pack"
        try check(git_indexer_new(&indexer, directory, 0o444, odb, &options), "start indexing a pack")
        defer { git_indexer_free(indexer) }
        var stats = git_indexer_progress()
        let appended = pack.withUnsafeBytes { git_indexer_append(indexer, $0.baseAddress, $0.count, &stats) }
        try check(appended, "index a pack")
        try check(git_indexer_commit(indexer, &stats), "index a pack")
        guard let name = git_indexer_name(indexer) else { return [] }
        return PackIndex.objectIDs(atPath: directory + "/pack-" + String(cString: name) + ".idx") ?? []
    }
}
