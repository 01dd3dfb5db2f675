internal import CGitShim
internal import CLibgit2
import Foundation

/// An author or committer line: who, and when in which time zone.
package struct Signature: Sendable, Equatable {
    package let name: String
    package let email: String
    /// Seconds since 1970, as git stores it.
    package let time: Int64
    /// Offset from UTC in minutes.
    package let offsetMinutes: Int32

    /// The signature of `name <email>` at `time` seconds since 1970, `offsetMinutes` from UTC.
    package init(name: String, email: String, time: Int64, offsetMinutes: Int32) {
        (self.name, self.email, self.time, self.offsetMinutes) = (name, email, time, offsetMinutes)
    }
}

/// A commit as read from the object database.
package struct CommitRecord: Sendable {
    package let id: ObjectID
    package let tree: ObjectID
    package let parents: [ObjectID]
    package let author: Signature
    package let committer: Signature
    package let message: String
}

/// A tree entry to write: a blob (file) or a subtree.
package struct TreeEntry {
    package let name: String
    package let id: ObjectID
    package let isTree: Bool

    /// The entry `name` pointing at `id`, a subtree when `isTree`.
    package init(name: String, id: ObjectID, isTree: Bool) {
        (self.name, self.id, self.isTree) = (name, id, isTree)
    }
}

extension Repository {
    /// Stores `bytes` as a blob and returns its id.
    package func writeBlob(_ bytes: Data) throws(GitError) -> ObjectID {
        var oid = git_oid()
        let code = bytes.withUnsafeBytes { buffer in
            git_blob_create_from_buffer(&oid, handle, buffer.baseAddress, buffer.count)
        }
        try check(code, "write blob")
        return ObjectID(oid)
    }

    /// Reads a blob's bytes.
    package func readBlob(_ id: ObjectID) throws(GitError) -> Data {
        var oid = id.raw
        var blob: OpaquePointer?
        try check(git_blob_lookup(&blob, handle, &oid), "read blob \(id)")
        defer { git_blob_free(blob) }
        let size = Int(git_blob_rawsize(blob))
        guard size > 0, let content = git_blob_rawcontent(blob) else { return Data() }
        return Data(bytes: content, count: size)
    }

    /// The entries of tree `id`, in the tree's order (blobs and trees; a submodule's commit is left out).
    package func readTree(_ id: ObjectID) throws(GitError) -> [TreeEntry] {
        var oid = id.raw
        var tree: OpaquePointer?
        try check(git_tree_lookup(&tree, handle, &oid), "read tree \(id)")
        defer { git_tree_free(tree) }
        return (0..<git_tree_entrycount(tree)).compactMap { index in
            guard let entry = git_tree_entry_byindex(tree, index) else { return nil }
            let type = git_tree_entry_type(entry)
            guard type == GIT_OBJECT_TREE || type == GIT_OBJECT_BLOB else { return nil }
            return TreeEntry(
                name: String(cString: git_tree_entry_name(entry)), id: ObjectID(git_tree_entry_id(entry).pointee), isTree: type == GIT_OBJECT_TREE)
        }
    }

    /// Writes one tree holding `entries` and returns its id.
    package func writeTree(_ entries: [TreeEntry]) throws(GitError) -> ObjectID {
        var builder: OpaquePointer?
        try check(git_treebuilder_new(&builder, handle, nil), "start tree")
        defer { git_treebuilder_free(builder) }
        for entry in entries {
            var oid = entry.id.raw
            let mode = entry.isTree ? GIT_FILEMODE_TREE : GIT_FILEMODE_BLOB
            try check(git_treebuilder_insert(nil, builder, entry.name, &oid, mode), "add '\(entry.name)' to tree")
        }
        var oid = git_oid()
        try check(git_treebuilder_write(&oid, builder), "write tree")
        return ObjectID(oid)
    }

    /// Writes the empty tree and returns its id: into an outgoing quarantine's in-memory store when it has one
    /// (`memoryObjects`), as its commits go. Through the object database, libgit2 looked for it in every pack of the
    /// store first: a first push of a million documents, for its manifest's one tree, mapped 59 MB of the store's
    /// pack indexes a second time (a lookup maps the whole large page-cache folio it lands in).
    package func writeEmptyTree() throws(GitError) -> ObjectID {
        if let written = try writeToMemory(GIT_OBJECT_TREE, []) { return written }
        return try writeTree([])
    }

    /// Writes `bytes` as an object of `type` to an outgoing quarantine's in-memory store (`memoryObjects`), without
    /// libgit2 looking for it in the store's packs first; nil when this repository has none.
    private func writeToMemory(_ type: git_object_t, _ bytes: [UInt8]) throws(GitError) -> ObjectID? {
        guard let memoryObjects else { return nil }
        return try bytes.withUnsafeBytes { buffer in
            Result { () throws(GitError) in try MemoryRepository.write(type, buffer, into: memoryObjects) }
        }.get()
    }

    /// The id of the blob or tree at `path` inside `tree`, nil when the path is absent.
    package func entry(at path: String, inTree tree: ObjectID) throws(GitError) -> (id: ObjectID, isTree: Bool)? {
        var treeID = tree.raw
        var treeHandle: OpaquePointer?
        try check(git_tree_lookup(&treeHandle, handle, &treeID), "read tree \(tree)")
        defer { git_tree_free(treeHandle) }
        var entry: OpaquePointer?
        let code = git_tree_entry_bypath(&entry, treeHandle, path)
        if code == GIT_ENOTFOUND.rawValue { return nil }
        try check(code, "find '\(path)' in tree \(tree)")
        defer { git_tree_entry_free(entry) }
        return (ObjectID(git_tree_entry_id(entry).pointee), git_tree_entry_type(entry) == GIT_OBJECT_TREE)
    }

    /// Writes a commit and returns its id; no reference is moved.
    package func writeCommit(tree: ObjectID, parents: [ObjectID], author: Signature, committer: Signature, message: String) throws(GitError)
        -> ObjectID
    {
        var oid = git_oid()
        try withCommitParts(tree: tree, parents: parents, author: author, committer: committer) { tree, parents, author, committer in
            git_commit_create(&oid, handle, nil, author, committer, nil, message, tree, parents.count, parents.baseAddress)
        }
        return ObjectID(oid)
    }

    /// `writeCommit` without libgit2 looking up the tree and each parent first (it reads every one): for a commit of
    /// many parents the caller knows are here, as a manifest's heads are. The same bytes (`ObjectBytes`, held to
    /// libgit2's formatting by `ObjectBytesTests`), written to the object database as they are.
    ///
    /// An outgoing quarantine's commits go straight to its in-memory store (`memoryObjects`), where they are read
    /// first. Through the object database, libgit2 looked for each one in every pack of the store first: the 15,876
    /// commits of a first manifest of a million documents mapped all of the store's pack indexes a second time,
    /// 78 MB. One the store holds already is then held in memory too, until the quarantine goes.
    package func writeCommit(
        tree: ObjectID, knownParents parents: [ObjectID], author: Signature, committer: Signature, message: String
    ) throws(GitError) -> ObjectID {
        let bytes = try ObjectBytes.commit(tree: tree, parents: parents, author: author, committer: committer, message: message)
        if let written = try writeToMemory(GIT_OBJECT_COMMIT, bytes) { return written }
        var oid = git_oid()
        var odb: OpaquePointer?
        try check(git_repository_odb(&odb, handle), "open object database")
        defer { git_odb_free(odb) }
        try check(bytes.withUnsafeBytes { git_odb_write(&oid, odb, $0.baseAddress, $0.count, GIT_OBJECT_COMMIT) }, "write commit")
        return ObjectID(oid)
    }

    /// The bytes of the commit `writeCommit` would write, not written; the caller disposes of the buffer. Truce formats
    /// the commits it writes itself (`ObjectBytes`); this is libgit2's formatting, which `ObjectBytesTests` holds it to.
    func commitBuffer(tree: ObjectID, parents: [ObjectID], author: Signature, committer: Signature, message: String) throws(GitError) -> git_buf {
        var buffer = git_buf()
        try withCommitParts(tree: tree, parents: parents, author: author, committer: committer) { tree, parents, author, committer in
            git_commit_create_buffer(&buffer, handle, author, committer, nil, message, tree, parents.count, parents.baseAddress)
        }
        return buffer
    }

    /// Looks up the tree and parents and makes the signatures a commit is made of, and calls `make` with them, which
    /// returns libgit2's code.
    private func withCommitParts(
        tree: ObjectID, parents: [ObjectID], author: Signature, committer: Signature,
        _ make: (
            OpaquePointer?, UnsafeMutableBufferPointer<OpaquePointer?>, UnsafeMutablePointer<git_signature>?, UnsafeMutablePointer<git_signature>?
        ) -> Int32
    ) throws(GitError) {
        var treeID = tree.raw
        var treeHandle: OpaquePointer?
        try check(git_tree_lookup(&treeHandle, handle, &treeID), "read tree \(tree)")
        defer { git_tree_free(treeHandle) }
        var parentHandles: [OpaquePointer?] = []
        defer { for parent in parentHandles { git_commit_free(parent) } }
        for parent in parents {
            var parentID = parent.raw
            var commit: OpaquePointer?
            try check(git_commit_lookup(&commit, handle, &parentID), "read parent commit \(parent)")
            parentHandles.append(commit)
        }
        let authorSignature = try makeSignature(author)
        defer { git_signature_free(authorSignature) }
        let committerSignature = try makeSignature(committer)
        defer { git_signature_free(committerSignature) }
        let code = parentHandles.withUnsafeMutableBufferPointer { make(treeHandle, $0, authorSignature, committerSignature) }
        try check(code, "write commit")
    }

    /// A commit's committer time in seconds since 1970, the time libgit2's history walks order commits by.
    ///
    /// Read from the commit's bytes past libgit2's object cache, as `forEachCommit` reads them: a manifest of a first
    /// push dates its parts by the heads they list, a hundred thousand commits read once each. A commit libgit2 must
    /// read (missing, or refused by git's fsck rules) is read by libgit2, which fails or passes as it decides.
    package func committerTime(of id: ObjectID) throws(GitError) -> Int64 {
        if let commit = keptCommits?[id]?.record { return commit.committer.time }
        return try committerTime(of: id, readingFrom: nil, rememberingProof: true)
    }

    /// `committerTime(of:)` read raw (from `entries` first, when given), or by libgit2 when the bytes do not scan.
    private func committerTime(of id: ObjectID, readingFrom entries: PackEntries?, rememberingProof: Bool) throws(GitError) -> Int64 {
        if let raw = try rawObject(id, ofType: GIT_OBJECT_COMMIT, missingIsNil: true, rememberingProof: rememberingProof, from: entries),
            let time = CommitHeader.committerTime(of: raw)
        {
            return time
        }
        var oid = id.raw
        var commit: OpaquePointer?
        try check(git_commit_lookup(&commit, handle, &oid), "read commit \(id)")
        defer { git_commit_free(commit) }
        return git_commit_time(commit)
    }

    /// `committerTime(of:)` of each of `ids`, in their order, read from this repository's packs in the order the packs
    /// hold them, on two threads when there are many (`DividedPackReads`): a replica's first manifest dates its parts
    /// by the heads they list, and reading each of a hundred thousand heads through libgit2, at random in the packs,
    /// was a sixth of a first push. What the packs cannot give is read here after, through libgit2.
    package func committerTimes(of ids: [ObjectID]) throws(GitError) -> [Int64] {
        let reads = DividedPackReads(
            try PackEntries(objectsDirectory: gitDirectory + "objects", provenBy: .indexCRC), instrumentation: instrumentation,
            orderedAtOnce: Self.localPushCommitsPerPack)
        let (parts, unread) = reads.read(ids, ofType: GIT_OBJECT_COMMIT, remembering: false, into: [(position: Int, time: Int64)]()) {
            times, position, raw in
            guard let time = CommitHeader.committerTime(of: raw) else { return false }
            times.append((position, time))
            return true
        }
        var times = [Int64](repeating: 0, count: ids.count)
        for part in parts { for (position, time) in part { times[position] = time } }
        for position in unread { times[position] = try committerTime(of: ids[position], readingFrom: reads.entries, rememberingProof: false) }
        return times
    }

    /// Reads a commit; fails with `GIT_ENOTFOUND` when `id` is absent or not a commit.
    package func readCommit(_ id: ObjectID) throws(GitError) -> CommitRecord {
        instrumentation.countCommitRead()
        if let commit = keptCommits?[id]?.record { return commit }
        // A sync's listing reads the parts of a manifest after the heads have filled `keptCommits`: through libgit2,
        // every index of the packs read in place was opened a second time.
        if let found = directPackReads?.read(id, remembering: false), found.type == GIT_OBJECT_COMMIT,
            let commit = CommitRecord(id: id, fsckCleanRaw: found.bytes)
        {
            return commit
        }
        instrumentation.countReadThroughLibgit2()
        var oid = id.raw
        var commit: OpaquePointer?
        try check(git_commit_lookup(&commit, handle, &oid), "read commit \(id)")
        defer { git_commit_free(commit) }
        let parentCount = git_commit_parentcount(commit)
        let parents = (0..<parentCount).map { ObjectID(git_commit_parent_id(commit, $0).pointee) }
        return CommitRecord(
            id: id,
            tree: ObjectID(git_commit_tree_id(commit).pointee),
            parents: parents,
            author: Signature(git_commit_author(commit).pointee),
            committer: Signature(git_commit_committer(commit).pointee),
            message: String(cString: git_commit_message(commit))
        )
    }

    /// Finds the one commit whose id starts with `prefix` (4 to 40 hexadecimal digits).
    package func commitID(forPrefix prefix: String) throws(GitError) -> ObjectID {
        var oid = git_oid()
        try check(git_oid_fromstrn(&oid, prefix, prefix.utf8.count), "parse version id '\(prefix)'")
        var object: OpaquePointer?
        try check(git_object_lookup_prefix(&object, handle, &oid, prefix.utf8.count, GIT_OBJECT_COMMIT), "find version '\(prefix)'")
        defer { git_object_free(object) }
        return ObjectID(git_object_id(object).pointee)
    }

    /// True when `id` names a commit in the object database.
    package func containsCommit(_ id: ObjectID) throws(GitError) -> Bool { try contains(id, ofType: GIT_OBJECT_COMMIT, "commit") }

    /// True when the object database holds `id`, as far as the packs it has already read tell: a miss does not
    /// rescan the pack directory (libgit2 does, on every miss), so another process's new pack may be missed.
    package func containsObjectWithoutRescan(_ id: ObjectID) throws(GitError) -> Bool {
        var odb: OpaquePointer?
        try check(git_repository_odb(&odb, handle), "open object database")
        defer { git_odb_free(odb) }
        var oid = id.raw
        return git_odb_exists_ext(odb, &oid, UInt32(GIT_ODB_LOOKUP_NO_REFRESH.rawValue)) == 1
    }

    /// The largest blob `containsBlob` proves when the packs read in place hold it.
    static let blobsProvenWhenAskedAbout = 1 << 12

    /// True when `id` names a blob in the object database.
    ///
    /// Reads only the object's header: a large blob's content is not inflated to learn that it is one. The packs read
    /// in place (`directPackReads`) are asked first: through libgit2, a first sync of a million documents mapped every
    /// pack of the other store a second time, 300 MB more of the process's memory. There a blob of at most
    /// `blobsProvenWhenAskedAbout` bytes is proven as it is asked about, on whichever of a first sync's threads checks
    /// it, and the copy, on one thread, takes it as proven.
    package func containsBlob(_ id: ObjectID) throws(GitError) -> Bool {
        if let type = directPackReads?.type(of: id, provingUpTo: Self.blobsProvenWhenAskedAbout) { return type == GIT_OBJECT_BLOB }
        instrumentation.countReadThroughLibgit2()
        var odb: OpaquePointer?
        try check(git_repository_odb(&odb, handle), "open object database")
        defer { git_odb_free(odb) }
        var oid = id.raw
        var size = 0
        var type = GIT_OBJECT_INVALID
        let code = git_odb_read_header(&size, &type, odb, &oid)
        if code == GIT_ENOTFOUND.rawValue { return false }
        try check(code, "read blob \(id)")
        return type == GIT_OBJECT_BLOB
    }

    /// True when `id` names an object of `type`; libgit2 reports an object of another type as not found. The packs
    /// read in place (`directPackReads`) are asked first, as for `containsBlob`: a lookup through libgit2 opens every
    /// index of theirs that it searches.
    private func contains(_ id: ObjectID, ofType type: git_object_t, _ typeName: String) throws(GitError) -> Bool {
        if let found = directPackReads?.type(of: id) { return found == type }
        instrumentation.countReadThroughLibgit2()
        var oid = id.raw
        var object: OpaquePointer?
        let code = git_object_lookup(&object, handle, &oid, type)
        if code == GIT_ENOTFOUND.rawValue { return false }
        try check(code, "read \(typeName) \(id)")
        git_object_free(object)
        return true
    }

    private func makeSignature(_ signature: Signature) throws(GitError) -> UnsafeMutablePointer<git_signature>? {
        var result: UnsafeMutablePointer<git_signature>?
        try check(
            git_signature_new(&result, signature.name, signature.email, git_time_t(signature.time), Int32(signature.offsetMinutes)),
            "make signature for '\(signature.name)'")
        return result
    }
}

extension Signature {
    init(_ raw: git_signature) {
        name = String(cString: raw.name)
        email = String(cString: raw.email)
        time = Int64(raw.when.time)
        offsetMinutes = Int32(raw.when.offset)
    }
}
