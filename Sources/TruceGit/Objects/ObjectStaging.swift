internal import CGitShim
internal import CLibgit2
import Foundation

/// Re-implements git's tree object bytes and entry order (git-mktree, fsck.c fsck_tree): byte-compatible with git, listed in TruceGit/README.md.
///
/// A second handle on a repository whose new objects go to memory, then all at once into one pack.
///
/// The bulk path, as `git fast-import` does it: writing thousands of loose
/// objects costs an fsync each, one pack costs one. Objects written through
/// `repository` exist only in memory until `flush()` packs them; a crash
/// before that loses the batch, never anything acknowledged.
package final class ObjectStaging {
    /// The handle to write through (and to read back what was written).
    package let repository: Repository
    private let backend: UnsafeMutablePointer<git_odb_backend>
    private var written: [ObjectID] = []
    /// The bytes of the recorded objects written straight into memory: packed and handed over without reading them back.
    private var writtenRaw: [ObjectID: RawObject] = [:]
    /// Bytes of content (blobs) recorded since the last pack, for `spillIfFull`.
    private var heldBytes = 0

    /// What a batch may hold in memory before `spillIfFull` packs it: objects, and bytes of content.
    ///
    /// A batch of a million saves would otherwise hold four million objects until its one pack is written;
    /// with this, the batch's own size, not the store's or the import's, sets the writer's memory.
    package static let spillLimit = (objects: 1 << 17, bytes: 64 << 20)

    /// Whether each object's bytes are kept beside memory's copy, to be handed over (`takeRecorded`) without reading back.
    private let keepsBytes: Bool

    /// A writer on the repository at `path`; its reads count in `instrumentation` (the store's). Without
    /// `keepingBytes`, objects are held once, in memory's object store, and read back when packed: for a writer
    /// that only packs.
    package init(path: String, instrumentation: Instrumentation = Instrumentation(), keepingBytes: Bool = true) throws(GitError) {
        keepsBytes = keepingBytes
        repository = try Repository.openBare(at: path, instrumentation: instrumentation)
        var backend: UnsafeMutablePointer<git_odb_backend>?
        try check(git_mempack_new(&backend), "start in-memory object store")
        // Above the loose and pack backends, so every write lands here.
        try repository.attach(backend, priority: 1000, "in-memory object store")
        self.backend = backend!
    }

    /// Notes that `id` was written through `repository` and must go into the pack; `size` counts a blob's content.
    package func record(_ id: ObjectID, size: Int = 0) {
        written.append(id)
        heldBytes += size
    }

    /// Packs what is held (as `flush` does) once it passes `spillLimit`; returns true when it wrote a pack.
    ///
    /// For writers of many versions at once: call it between versions. The
    /// pack is durable and unreferenced until the caller publishes heads;
    /// should the caller stop before that, `prune` reclaims it, as it does
    /// any object no head reaches. Reads of what was packed go on working:
    /// libgit2 finds the new pack when memory misses.
    @discardableResult
    package func spillIfFull(compressed: Bool = true) throws(GitError) -> Bool {
        guard written.count >= Self.spillLimit.objects || heldBytes >= Self.spillLimit.bytes else { return false }
        try flush(compressed: compressed)
        return true
    }

    /// An object as the object database stores it: its type (git's number: 1 commit, 2 tree, 3 blob) and its bytes.
    package struct RawObject: Sendable {
        package let type: UInt8
        package let bytes: [UInt8]
        package init(type: UInt8, bytes: [UInt8]) { (self.type, self.bytes) = (type, bytes) }
    }

    /// Hands over the objects recorded since the last call (as a save log record holds them) and forgets them.
    package func takeRecorded() throws(GitError) -> [RawObject] {
        var odb: OpaquePointer?
        try check(git_repository_odb(&odb, repository.handle), "open object database")
        defer { git_odb_free(odb) }
        var seen = Set<ObjectID>()
        defer { writtenRaw.removeAll() }
        let objects = try written.filter { seen.insert($0).inserted }.map { id throws(GitError) in
            if let raw = writtenRaw[id] { return raw }
            var oid = id.raw
            var object: OpaquePointer?
            try check(git_odb_read(&object, odb, &oid), "read object \(id)")
            defer { git_odb_object_free(object) }
            let bytes = UnsafeRawBufferPointer(start: git_odb_object_data(object), count: git_odb_object_size(object))
            return RawObject(type: UInt8(truncatingIfNeeded: git_odb_object_type(object).rawValue), bytes: Array(bytes))
        }
        written.removeAll()
        return objects
    }

    /// Writes `object` into memory and records it, as if written through `repository`; returns its id.
    @discardableResult
    package func insert(_ object: RawObject) throws(GitError) -> ObjectID {
        guard [GIT_OBJECT_COMMIT, GIT_OBJECT_TREE, GIT_OBJECT_BLOB].contains(where: { $0.rawValue == Int32(object.type) }) else {
            throw GitError(operation: "write object", code: -1, errorClass: 0, message: "object type \(object.type) is not a commit, tree or blob")
        }
        return try writeDirectly(git_object_t(Int32(object.type)), object.bytes)
    }

    /// Writes a blob into memory (see `writeDirectly`) and records it.
    package func writeBlob(_ content: Data) throws(GitError) -> ObjectID {
        try writeDirectly(GIT_OBJECT_BLOB, content)
    }

    /// Writes a tree of `entries` into memory (see `writeDirectly`) and records it; the same bytes git's tree builder writes.
    package func writeTree(_ entries: [TreeEntry]) throws(GitError) -> ObjectID {
        // git orders entries by name, a tree's name as if it ended in "/" (a save's trees have one entry each).
        let sorted =
            entries.count < 2
            ? entries
            : entries.map { (entry: $0, order: Array($0.name.utf8) + ($0.isTree ? [0x2F] : [])) }.sorted {
                $0.order.lexicographicallyPrecedes($1.order)
            }.map(\.entry)
        var bytes: [UInt8] = []
        for entry in sorted {
            bytes += Array((entry.isTree ? "40000 " : "100644 ").utf8) + Array(entry.name.utf8) + [0] + entry.id.bytes
        }
        return try writeDirectly(GIT_OBJECT_TREE, bytes)
    }

    /// Writes a commit into memory (see `writeDirectly`) and records it: libgit2 formats it, as `Repository.writeCommit` does.
    package func writeCommit(tree: ObjectID, parents: [ObjectID], author: Signature, committer: Signature, message: String) throws(GitError)
        -> ObjectID
    {
        var buffer = try repository.commitBuffer(tree: tree, parents: parents, author: author, committer: committer, message: message)
        defer { git_buf_dispose(&buffer) }
        return try writeDirectly(GIT_OBJECT_COMMIT, UnsafeRawBufferPointer(start: buffer.ptr, count: buffer.size))
    }

    /// Writes an object into memory without asking the store whether it has it, and records it.
    ///
    /// libgit2's `git_odb_write` asks first, and each object the store lacks
    /// (all of a new save's) costs a rescan of `objects/pack` and a failed
    /// touch of the loose path: five system calls an object. An object the
    /// store has already is then held twice, which a pack and git allow.
    private func writeDirectly(_ type: git_object_t, _ bytes: some ContiguousBytes) throws(GitError) -> ObjectID {
        try bytes.withUnsafeBytes { buffer in Result { () throws(GitError) in try writeDirectly(type, buffer) } }.get()
    }

    private func writeDirectly(_ type: git_object_t, _ bytes: UnsafeRawBufferPointer) throws(GitError) -> ObjectID {
        var oid = git_oid()
        try check(git_odb_hash(&oid, bytes.baseAddress, bytes.count, type), "hash object")
        if backend.pointee.exists(backend, &oid) != 1 {
            try check(backend.pointee.write(backend, &oid, bytes.baseAddress, bytes.count, type), "write object to memory")
        }
        let id = ObjectID(oid)
        record(id, size: type == GIT_OBJECT_BLOB ? bytes.count : 0)
        if keepsBytes { writtenRaw[id] = RawObject(type: UInt8(truncatingIfNeeded: type.rawValue), bytes: Array(bytes)) }
        return id
    }

    /// Empties memory and forgets what was recorded: for objects that are durable elsewhere (a save log's, once applied).
    package func discard() throws(GitError) {
        written.removeAll()
        writtenRaw.removeAll()
        heldBytes = 0
        try check(git_mempack_reset(backend), "empty in-memory object store")
    }

    /// Writes every recorded object into one pack (fsynced) and empties memory; returns the number packed.
    ///
    /// Without `compressed`, objects are stored uncompressed (see `PackWriter.write`).
    @discardableResult
    package func flush(compressed: Bool = true) throws(GitError) -> Int {
        guard !written.isEmpty else { return 0 }
        // Not libgit2's pack builder: it reads every reference in the store on each write (see `PackWriter`).
        try PackWriter(repository: repository).write(written, known: writtenRaw, compressed: compressed)
        let count = written.count
        written.removeAll()
        writtenRaw.removeAll()
        heldBytes = 0
        try check(git_mempack_reset(backend), "empty in-memory object store")
        return count
    }
}
