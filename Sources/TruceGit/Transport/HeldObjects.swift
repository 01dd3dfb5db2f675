internal import CLibgit2

/// The objects a repository that a local push goes to holds: its packs, and its loose objects as listed once.
///
/// libgit2's lookup looks for a loose file of every object its packs lack, one `access` call each, and most of a
/// first push's objects are lacking: a tenth of a first push's time went there (`LocalPushTests`). A loose object
/// written there after the listing is only sent once more.
final class HeldObjects {
    private var packs: OpaquePointer?
    private let loose: Set<ObjectID>

    init(in objectsDirectory: String) throws(GitError) {
        try check(git_odb_new(&packs), "open the packs of \(objectsDirectory)")
        var backend: UnsafeMutablePointer<git_odb_backend>?
        let opened = git_odb_backend_pack(&backend, objectsDirectory)
        let added = opened == 0 ? git_odb_add_backend(packs, backend, 1) : opened
        if opened == 0, added != 0 { backend?.pointee.free(backend) }
        guard added == 0 else {
            git_odb_free(packs)
            throw GitError.last("open the packs of \(objectsDirectory)", code: added)
        }
        loose = Repository.looseObjectIDs(in: objectsDirectory + "/")
    }

    deinit { git_odb_free(packs) }

    /// Whether the repository holds `id`: listed loose, or in a pack as last read (no rescan of the pack directory
    /// on a miss, libgit2's default, which most objects of a first push would make).
    func contains(_ id: ObjectID) -> Bool {
        if loose.contains(id) { return true }
        var oid = id.raw
        return git_odb_exists_ext(packs, &oid, UInt32(GIT_ODB_LOOKUP_NO_REFRESH.rawValue)) == 1
    }

    /// Reads the pack directory again: after a pack was written there.
    func readPacksAgain() throws(GitError) {
        try check(git_odb_refresh(packs), "read the packs again")
    }
}
