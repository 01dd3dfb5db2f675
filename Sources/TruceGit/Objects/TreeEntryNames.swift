internal import CGitShim
internal import CLibgit2

extension Repository {
    /// Why libgit2 would refuse `name` as a tree entry here (what a local save runs into), nil when it takes it.
    ///
    /// libgit2 also reads the header of the entry's object, and refuses one of another kind. Until an entry of its kind
    /// (blob or tree) has passed here, `id` is read so; after, the name is tried in a repository in memory that holds
    /// an empty blob and an empty tree, under this one's config (the callers read each entry's object themselves, as
    /// the kind it is listed as). Here each read searched every pack of the other store: a first sync of a million
    /// documents read a tree's header twice per document, and mapped that store's packs once more (70 MB).
    package func treeEntryNameProblem(_ name: String, id: ObjectID, isTree: Bool) -> String? {
        let kind: EntryNameCheck.Kinds = isTree ? .tree : .blob
        let inMemory = entryKindsPassed.contains(kind) ? entryNameCheck : nil
        var oid = (inMemory.map { isTree ? $0.tree : $0.blob } ?? id).raw
        var builder: OpaquePointer?
        guard git_treebuilder_new(&builder, inMemory?.repository ?? handle, nil) == 0 else { return "cannot start a tree" }
        defer { git_treebuilder_free(builder) }
        let code = git_treebuilder_insert(nil, builder, name, &oid, isTree ? GIT_FILEMODE_TREE : GIT_FILEMODE_BLOB)
        if code < 0 { return GitError.last("", code: code).message }
        if inMemory == nil {
            if entryNameCheck == nil { entryNameCheck = EntryNameCheck(config: self) }
            // One that cannot be made leaves the names tried here, each object read.
            if entryNameCheck != nil { entryKindsPassed.insert(kind) }
        }
        return nil
    }
}

/// A repository in memory holding an empty blob and an empty tree, with another repository's config (its
/// `core.protectNTFS` and `core.protectHFS` decide which names libgit2 refuses): where libgit2 judges an entry's name,
/// and finds its object at once.
final class EntryNameCheck {
    /// Kinds of tree entry.
    struct Kinds: OptionSet {
        let rawValue: UInt8
        static let blob = Kinds(rawValue: 1)
        static let tree = Kinds(rawValue: 2)
    }

    let repository: OpaquePointer
    /// The empty blob's id.
    let blob: ObjectID
    /// The empty tree's id.
    let tree: ObjectID

    /// Nil when libgit2 cannot make one (the names are then tried in the repository itself, each entry's object read).
    init?(config source: Repository) {
        var odb: OpaquePointer?
        var memory: UnsafeMutablePointer<git_odb_backend>?
        var repository: OpaquePointer?
        var config: OpaquePointer?
        var oid = git_oid()
        guard git_odb_new(&odb) == 0 else { return nil }
        defer { git_odb_free(odb) }
        guard git_mempack_new(&memory) == 0 else { return nil }
        guard git_odb_add_backend(odb, memory, 1) == 0 else {
            memory?.pointee.free(memory)
            return nil
        }
        guard git_repository_wrap_odb(&repository, odb) == 0 else { return nil }
        guard git_repository_config(&config, source.handle) == 0 else {
            git_repository_free(repository)
            return nil
        }
        defer { git_config_free(config) }
        var treeOID = git_oid()
        guard git_repository_set_config(repository, config) == 0, git_odb_write(&oid, odb, "", 0, GIT_OBJECT_BLOB) == 0,
            git_odb_write(&treeOID, odb, "", 0, GIT_OBJECT_TREE) == 0
        else {
            git_repository_free(repository)
            return nil
        }
        (self.repository, blob, tree) = (repository!, ObjectID(oid), ObjectID(treeOID))
    }

    deinit { git_repository_free(repository) }
}
