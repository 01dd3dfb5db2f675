internal import CGitShim
internal import CLibgit2
import Foundation

/// A second handle on a repository whose new objects go to memory (libgit2's mempack), where the handle reads them as
/// it reads the repository's: for the save log's overlay, whose saves git does not have yet, and for tests that
/// write objects and pack them.
///
/// Objects written through it exist only in memory until `flush()` packs
/// them or `discard()` forgets them (the save log holds them durably). A
/// writer that only packs what it writes needs no handle of its own:
/// `ObjectStaging` holds the bytes for one pack.
package final class MemoryRepository {
    /// The handle to write through (and to read back what was written).
    package let repository: Repository
    private let backend: UnsafeMutablePointer<git_odb_backend>
    private var written: [ObjectID] = []
    /// The bytes of the recorded objects written straight into memory: packed and handed over without reading them back.
    private var writtenRaw: [ObjectID: RawObject] = [:]

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
    package func record(_ id: ObjectID) {
        written.append(id)
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
        try writeDirectly(GIT_OBJECT_TREE, ObjectBytes.tree(entries))
    }

    /// Writes a commit into memory (see `writeDirectly`) and records it, formatted as libgit2 formats one.
    package func writeCommit(tree: ObjectID, parents: [ObjectID], author: Signature, committer: Signature, message: String) throws(GitError)
        -> ObjectID
    {
        try writeDirectly(
            GIT_OBJECT_COMMIT, ObjectBytes.commit(tree: tree, parents: parents, author: author, committer: committer, message: message))
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
        let id = try Self.write(type, bytes, into: backend)
        record(id)
        if keepsBytes { writtenRaw[id] = RawObject(type: UInt8(truncatingIfNeeded: type.rawValue), bytes: Array(bytes)) }
        return id
    }

    /// Writes an object into the in-memory object store `backend` (libgit2's mempack) as it is, unless it holds it
    /// already, without asking the other backends of its object database; returns its id.
    static func write(_ type: git_object_t, _ bytes: UnsafeRawBufferPointer, into backend: UnsafeMutablePointer<git_odb_backend>)
        throws(GitError) -> ObjectID
    {
        var oid = git_oid()
        try check(git_odb_hash(&oid, bytes.baseAddress, bytes.count, type), "hash object")
        if backend.pointee.exists(backend, &oid) != 1 {
            try check(backend.pointee.write(backend, &oid, bytes.baseAddress, bytes.count, type), "write object to memory")
        }
        return ObjectID(oid)
    }

    /// Empties memory and forgets what was recorded: for objects that are durable elsewhere (a save log's, once applied).
    package func discard() throws(GitError) {
        written.removeAll()
        writtenRaw.removeAll()
        try check(git_mempack_reset(backend), "empty in-memory object store")
    }

    /// Writes every recorded object into one pack (fsynced), deflated at `compression`'s level, and empties memory;
    /// returns the number packed.
    @discardableResult
    package func flush(compression: PackCompression = .standard) throws(GitError) -> Int {
        guard !written.isEmpty else { return 0 }
        // Not libgit2's pack builder: it reads every reference in the store on each write (see `PackWriter`).
        try PackWriter(repository: repository).write(written, known: writtenRaw, compression: compression)
        let count = written.count
        written.removeAll()
        writtenRaw.removeAll()
        try check(git_mempack_reset(backend), "empty in-memory object store")
        return count
    }
}
