internal import CGitShim
internal import CLibgit2

extension Repository {
    /// Why libgit2 would refuse `name` as a tree entry here (what a local save runs into), nil when it takes it.
    /// A tree's `id` must name a tree here; a blob's is read only until one blob has passed (see below).
    package func treeEntryNameProblem(_ name: String, id: ObjectID, isTree: Bool) -> String? {
        // A name libgit2 took once it takes again (the entry's object is checked on its own): documents share folders.
        let verdictKey = (isTree ? "tree " : "blob ") + name
        if acceptedEntryNames.contains(verdictKey) { return nil }
        // libgit2 also reads the header of the entry's object. Once a blob has passed, a blob's name is tried in a
        // repository of one blob in memory (the callers check each blob themselves): here that read searched every
        // pack of the other store, each miss formatting an error, for every document a sync brings.
        let repository = isTree ? handle : blobNameCheck?.repository ?? handle
        var oid = (isTree ? id : blobNameCheck?.blob ?? id).raw
        var builder: OpaquePointer?
        guard git_treebuilder_new(&builder, repository, nil) == 0 else { return "cannot start a tree" }
        defer { git_treebuilder_free(builder) }
        let code = git_treebuilder_insert(nil, builder, name, &oid, isTree ? GIT_FILEMODE_TREE : GIT_FILEMODE_BLOB)
        if code < 0 { return GitError.last("", code: code).message }
        if isTree {
            acceptedEntryNames.insert(verdictKey)
        } else if blobNameCheck == nil {
            blobNameCheck = BlobNameCheck(config: self)
        }
        return nil
    }
}

/// A repository in memory holding one empty blob, with another repository's config (its `core.protectNTFS` and
/// `core.protectHFS` decide which names libgit2 refuses): where libgit2 judges a blob entry's name, and finds its
/// object at once.
final class BlobNameCheck {
    let repository: OpaquePointer
    /// The empty blob's id.
    let blob: ObjectID

    /// Nil when libgit2 cannot make one (the names are then tried in the repository itself, as before the first blob).
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
        guard git_repository_set_config(repository, config) == 0, git_odb_write(&oid, odb, "", 0, GIT_OBJECT_BLOB) == 0 else {
            git_repository_free(repository)
            return nil
        }
        (self.repository, blob) = (repository!, ObjectID(oid))
    }

    deinit { git_repository_free(repository) }
}
