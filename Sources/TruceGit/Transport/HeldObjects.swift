internal import CLibgit2

/// The objects a repository that a local push goes to holds: its packs, its loose objects as listed once, and what the
/// push's own batches wrote there.
///
/// libgit2's lookup looks for a loose file of every object its packs lack, one `access` call each, and most of a
/// first push's objects are lacking: a tenth of a first push's time went there (`LocalPushTests`). A loose object
/// written there after the listing is only sent once more.
///
/// Each pack the push wrote is asked only for an object that a filter of what it holds may hold, and read in place
/// (`MappedPack`): a later batch's objects are nearly all missing from them, and a first push of a million documents
/// spent a fifth of its time in libgit2 finding that out.
final class HeldObjects {
    /// The packs there when the push began, as read then.
    private let packsBefore: OpaquePointer
    private let loose: Set<ObjectID>
    /// The packs the push wrote there, each with a filter of the objects it holds.
    private var writtenPacks: [(pack: MappedPack, filter: ObjectIDFilter)] = []
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

    /// Removes from `ids` those the repository holds, the rest kept in their order: it lacks an object not listed loose,
    /// in no pack as first read (no rescan of the pack directory on a miss, libgit2's default, which most objects of a
    /// first push would make), nor in a pack the push wrote.
    ///
    /// The written packs are asked about the ids their filter may hold in the order of the ids (`IndexSweep`): asked in
    /// the walk's order, the few a generation asked went to every page of those indexes at random, 80 MB of a first
    /// push of a million documents.
    func removeHeld(from ids: inout [ObjectID]) {
        let lacks = lacks(each: ids)
        var kept = 0
        for position in ids.indices where lacks[position] {
            ids[kept] = ids[position]
            kept += 1
        }
        ids.removeLast(ids.count - kept)
    }

    /// Whether the repository lacks each of `ids`, in their order (as `removeHeld` tells).
    func lacks(each ids: [ObjectID]) -> [Bool] {
        var lacks = [Bool](repeating: true, count: ids.count)
        // Those a written pack's filter may hold, with the first such pack: the sweep goes a pack at a time. Asked of
        // every written pack at once, a batch's few false hits held a third of each of their indexes resident (60 MB of
        // a first push of a million documents: a page of a file just written maps its whole large folio).
        var maybeWritten: [(position: Int, pack: Int)] = []
        for (position, id) in ids.enumerated() {
            var oid = id.raw
            if loose.contains(id) || git_odb_exists_ext(packsBefore, &oid, UInt32(GIT_ODB_LOOKUP_NO_REFRESH.rawValue)) == 1 {
                lacks[position] = false
            } else if let pack = writtenPacks.firstIndex(where: { $0.filter.mayContain(id) }) {
                maybeWritten.append((position, pack))
            }
        }
        func lookUp(_ maybe: Int) {
            instrumentation.countLookInWrittenPacks()
            let (position, first) = maybeWritten[maybe]
            lacks[position] = !writtenPacks[first...].contains { written in
                written.filter.mayContain(ids[position]) && written.pack.offset(of: ids[position]) != nil
            }
        }
        let maybeIDs = maybeWritten.lazy.map { ids[$0.position] }
        IndexSweep.lookUp(maybeIDs.indices, of: maybeIDs, groupedBy: { maybeWritten[$0].pack }, releasing: releaseIndexPages, lookUp)
        return lacks
    }

    private func releaseIndexPages() { for written in writtenPacks where written.pack.wasRead { written.pack.releaseIndexPages() } }

    /// Takes note of the pack at `path` (without its extension), holding `objects`, which the push wrote there.
    func wrote(_ objects: [ObjectID], inPack path: String) {
        // One that cannot be read in place is not asked: its objects may be sent again, which git takes.
        guard let pack = MappedPack(index: path + ".idx", pack: path + ".pack") else { return }
        var filter = ObjectIDFilter(holding: objects.count)
        for id in objects { filter.insert(id) }
        writtenPacks.append((pack, filter))
    }
}
