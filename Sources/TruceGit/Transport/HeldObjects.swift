internal import CLibgit2

/// The objects a repository that a local push goes to holds: its packs, its loose objects as listed once, and what the
/// push's own batches wrote there.
///
/// libgit2's lookup looks for a loose file of every object its packs lack, one `access` call each, and most of a
/// first push's objects are lacking: a tenth of a first push's time went there (`LocalPushTests`). A loose object
/// written there after the listing is only sent once more.
///
/// The packs the push wrote are asked only for an object that the filter of what it wrote may hold, and read in place
/// (`MappedPack`): a later batch's objects are nearly all missing from them, and a first push of a million documents
/// spent a fifth of its time in libgit2 finding that out.
final class HeldObjects {
    /// The packs there when the push began, as read then.
    private let packsBefore: OpaquePointer
    private let loose: Set<ObjectID>
    /// The packs the push wrote there, and a filter of the objects they hold.
    private var writtenPacks: [MappedPack] = []
    private var written = ObjectIDFilter()
    private let instrumentation: Instrumentation

    init(in objectsDirectory: String, instrumentation: Instrumentation) throws(GitError) {
        self.instrumentation = instrumentation
        var packs: OpaquePointer?
        try check(git_odb_new(&packs), "open the packs of \(objectsDirectory)")
        var backend: UnsafeMutablePointer<git_odb_backend>?
        let opened = git_odb_backend_pack(&backend, objectsDirectory)
        let added = opened == 0 ? git_odb_add_backend(packs, backend, 1) : opened
        if opened == 0, added != 0 { backend?.pointee.free(backend) }
        guard added == 0, let packs else {
            git_odb_free(packs)
            throw GitError.last("open the packs of \(objectsDirectory)", code: added)
        }
        packsBefore = packs
        loose = Repository.looseObjectIDs(in: objectsDirectory + "/")
    }

    deinit { git_odb_free(packsBefore) }

    /// Whether the repository holds `id`: listed loose, in a pack as first read (no rescan of the pack directory on a
    /// miss, libgit2's default, which most objects of a first push would make), or in a pack the push wrote.
    func contains(_ id: ObjectID) -> Bool {
        if loose.contains(id) { return true }
        var oid = id.raw
        if git_odb_exists_ext(packsBefore, &oid, UInt32(GIT_ODB_LOOKUP_NO_REFRESH.rawValue)) == 1 { return true }
        guard written.mayContain(id) else { return false }
        instrumentation.countLookInWrittenPacks()
        return writtenPacks.contains { $0.offset(of: id) != nil }
    }

    /// Takes note of the pack at `path` (without its extension), holding `objects`, which the push wrote there.
    func wrote(_ objects: [ObjectID], inPack path: String) {
        // One that cannot be read in place is not asked: its objects may be sent again, which git takes.
        guard let pack = MappedPack(index: path + ".idx", pack: path + ".pack") else { return }
        writtenPacks.append(pack)
        for id in objects { written.insert(id) }
    }
}
