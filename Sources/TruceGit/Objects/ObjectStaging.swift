internal import CGitShim
internal import CLibgit2
import Foundation

/// New objects held in memory, by id, until they are written into a repository as one pack: the bulk path, as
/// `git fast-import` takes it.
///
/// Writing thousands of loose objects costs an fsync each; one pack costs
/// one. Staging needs no repository handle: objects are hashed and kept as
/// bytes, and the pack is written from them. A crash before `flush` loses
/// what was staged, never anything acknowledged (no head names it yet).
package final class ObjectStaging {
    /// What a batch may hold in memory before `spillIfFull` packs it: objects, and bytes of content.
    ///
    /// A batch of a million saves would otherwise hold four million objects until its one pack is written;
    /// with this, the batch's own size, not the store's or the import's, sets the staging's memory.
    package static let spillLimit = (objects: 1 << 17, bytes: 64 << 20)

    /// The ids staged, in the order first written: the pack's order.
    private var order: [ObjectID] = []
    private var held: [ObjectID: RawObject] = [:]
    /// Bytes of content (blobs) staged since the last pack, for `spillIfFull`.
    private var heldBytes = 0
    /// The last spill, being written while the next is staged.
    private let spill = BackgroundPackWriter()
    /// Objects spilled since the last `flush`, which counts them.
    private var spilled = 0

    package init() { Libgit2.ensureInitialized() }

    // No thread goes on writing into a store after its writer has given up on it.
    deinit { try? spill.finished() }

    /// How many objects are staged since the last spill.
    package var count: Int { order.count }

    /// The staged object `id`, nil when it is neither staged nor in a spill still being written (a spill written is
    /// the repository's to read).
    package func object(_ id: ObjectID) -> RawObject? { held[id] ?? spill.writing[id] }

    /// Stages `content` as a blob; returns its id.
    @discardableResult
    package func writeBlob(_ content: Data) -> ObjectID {
        content.withUnsafeBytes { stage(RawObject.blobType, $0) }
    }

    /// Stages a tree of `entries`, the bytes git's tree builder writes; returns its id.
    package func writeTree(_ entries: [TreeEntry]) -> ObjectID {
        ObjectBytes.tree(entries).withUnsafeBytes { stage(RawObject.treeType, $0) }
    }

    /// Stages a commit, formatted as libgit2 formats one; returns its id.
    package func writeCommit(tree: ObjectID, parents: [ObjectID], author: Signature, committer: Signature, message: String) throws(GitError)
        -> ObjectID
    {
        try ObjectBytes.commit(tree: tree, parents: parents, author: author, committer: committer, message: message)
            .withUnsafeBytes { stage(RawObject.commitType, $0) }
    }

    /// Stages an object written elsewhere (a save log record holds them whole); returns its id.
    @discardableResult
    package func insert(_ object: RawObject) throws(GitError) -> ObjectID {
        guard [RawObject.commitType, RawObject.treeType, RawObject.blobType].contains(object.type) else {
            throw GitError(operation: "write object", code: -1, errorClass: 0, message: "object type \(object.type) is not a commit, tree or blob")
        }
        return object.bytes.withUnsafeBytes { stage(object.type, $0) }
    }

    private func stage(_ type: UInt8, _ bytes: UnsafeRawBufferPointer) -> ObjectID {
        var oid = git_oid()
        // Hashing cannot fail for these three types: libgit2 only refuses an unknown type.
        _ = git_odb_hash(&oid, bytes.baseAddress, bytes.count, git_object_t(Int32(type)))
        let id = ObjectID(oid)
        if held[id] == nil {
            held[id] = RawObject(type: type, bytes: Array(bytes))
            order.append(id)
            if type == RawObject.blobType { heldBytes += bytes.count }
        }
        return id
    }

    /// Starts packing what is staged into `repository` once it passes `spillLimit`, on another thread, and empties
    /// the staging; returns true when it did. The spill before is waited for first, and what it failed with thrown.
    ///
    /// For writers of many versions at once: call it between versions. The
    /// pack is durable once `flush` returns, and unreferenced until the caller
    /// publishes heads; should the caller stop before that, `prune` reclaims
    /// it, as it does any object no head reaches.
    @discardableResult
    package func spillIfFull(into repository: Repository, compression: PackCompression = .standard) throws(GitError) -> Bool {
        guard order.count >= Self.spillLimit.objects || heldBytes >= Self.spillLimit.bytes else { return false }
        try spill.start(
            order, known: held, into: repository.gitDirectory + "objects/pack/", compression: compression, instrumentation: repository.instrumentation
        )
        spilled += order.count
        order = []
        held = [:]
        heldBytes = 0
        return true
    }

    /// Writes every staged object into one pack of `repository` (fsynced, with its index and directory) beside a spill
    /// under way, waits for that, and empties the staging; returns the number packed since the last flush, spills
    /// too, deflated at `compression`'s level. Once it returns, every object staged is in a pack.
    @discardableResult
    package func flush(into repository: Repository, compression: PackCompression = .standard) throws(GitError) -> Int {
        defer { spilled = 0 }
        do {
            if !order.isEmpty { try PackWriter(repository: repository).write(order, known: held, compression: compression, distinct: true) }
        } catch {
            try? spill.finished()
            throw error
        }
        try spill.finished()
        let count = spilled + order.count
        order.removeAll()
        held.removeAll()
        heldBytes = 0
        return count
    }
}
