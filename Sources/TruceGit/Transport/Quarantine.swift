internal import CGitShim
internal import CLibgit2
import Foundation

/// A scratch repository inside the store's object database, where fetched objects wait until they are checked.
///
/// git's receive-pack quarantine, for libgit2's fetch: a bare repository at
/// `objects/tmp_truce_incoming_<pid>_<uuid>` that reads the store's objects
/// as an alternate, so the downloaded pack lands in its own directory while
/// reads through `repository` see it and the whole store. Its only references
/// are the ones given to it: libgit2 builds its "have" lines from every
/// reference of the fetching repository, newest first, and stops at the
/// first that the server knows, so offering the replica manifests (and not
/// thousands of heads with unrelated histories) lets the server find the
/// common history at once. Only `admit` copies objects into the store; the
/// rest go with the directory. A sync killed halfway leaves the directory,
/// which prune removes with the other temporary files.
package final class Quarantine {
    /// The handle to fetch and check through.
    package let repository: Repository
    private let directory: String
    private let storeObjects: String
    /// The store the objects are for.
    private let store: Repository
    /// The object directory of the local store objects are read from in place (`borrowObjects`), rather than
    /// downloaded, and that store's path.
    private var borrowed: (objects: String, path: String)?
    /// Whether the objects come from a local store read in place (`borrowObjects`): they are copied into the store in
    /// every case, where a download checked whole moves in as it came.
    package var isBorrowing: Bool { borrowed != nil }
    /// The indexes of the packs the store had when the quarantine was made: what a copy leaves out (see `admit`).
    private let storePacksBefore: [String]

    /// With `outgoing`, the scratch repository lives in the system's temporary directory instead, and what is written
    /// through it stays in memory: it is only ever pushed, and a process killed while pushing then leaves the store
    /// exactly as it was.
    package init(of store: Repository, offering references: [(name: String, target: ObjectID)] = [], outgoing: Bool = false) throws(GitError) {
        self.store = store
        storeObjects = store.gitDirectory + "objects"
        let packDirectory = storeObjects + "/pack/"
        // An index whose pack is gone (a prune killed between the two removals) holds nothing: git and libgit2 skip it,
        // and so must the copy's look at what the store has (`SyncTests.aPackIndexLeftWithoutItsPackHoldsNothing`).
        let names = Set((try? FileManager.default.contentsOfDirectory(atPath: packDirectory)) ?? [])
        storePacksBefore = names.filter { $0.hasSuffix(".idx") && names.contains($0.dropLast(".idx".count) + ".pack") }
            .sorted().map { packDirectory + $0 }
        let parent = outgoing ? NSTemporaryDirectory() : storeObjects + "/"
        // An incoming one a killed sync left is the store's prune's to remove; an outgoing one is no store's.
        if outgoing { OutgoingLeftovers.removeStale(in: parent) }
        directory = parent + "\(outgoing ? OutgoingLeftovers.prefix : "tmp_truce_incoming_")\(getpid())_\(UUID().uuidString)"
        repository = try Repository.createBare(at: directory, instrumentation: store.instrumentation)
        try Self.readStore(store, into: repository, quarantine: directory)
        if outgoing {
            // What a push sends waits in memory, not as loose files fsynced one by one, and enters the store as one pack
            // (`packIntoStore`) once the other side has taken it.
            var backend: UnsafeMutablePointer<git_odb_backend>?
            try check(git_mempack_new(&backend), "start in-memory object store")
            try repository.attach(backend, priority: 1000, "in-memory object store")
            repository.memoryObjects = backend
        }
        // One packed-refs file, not a loose ref (a file, a reflog, their directories and their fsyncs) per reference:
        // a hub offers one manifest per replica, and a sync with hundreds of replicas wrote, synced and deleted as many.
        if !references.isEmpty { try repository.updatePackedReferences(adding: references, removing: []) }
    }

    /// Makes `repository`, the quarantine at `directory`, read the objects of `store` behind its own.
    private static func readStore(_ store: Repository, into repository: Repository, quarantine directory: String) throws(GitError) {
        // The checks read each incoming commit several times (listing, head check, history check): read it once.
        repository.keptCommits = [:]
        let storeObjects = store.gitDirectory + "objects"
        var odb: OpaquePointer?
        try check(git_repository_odb(&odb, repository.handle), "open object database")
        defer { git_odb_free(odb) }
        try check(git_odb_add_disk_alternate(odb, storeObjects), "read the objects of \(store.path)")
        // After every pack (the quarantine's, the store's, a borrowed store's) and before every loose backend. Told of
        // the quarantine's own packs all the same, for a read that reaches it on a miss.
        try check(
            truce_odb_add_loose_object_guard(odb, storeObjects, directory + "/objects", Repository.looseGuardPriority),
            "guard the loose objects of \(store.path)")
    }

    /// Another handle on what `repository` reads (the download, or the borrowed store's packs read in place, and the
    /// store), for a second thread: a handle, its object cache and its packs read in place serve one thread at a time.
    ///
    /// It costs little memory beside the first: its packs read in place go through the first's mappings, and take
    /// half of what they may keep mapped, as the first's do from then on; it keeps few commits (one head's check reads
    /// its commit again at once; the first keeps what the listing read for the checks).
    package func secondReader() throws(GitError) -> Repository {
        let reader = try Repository.openBare(at: directory, instrumentation: repository.instrumentation)
        try Self.readStore(store, into: reader, quarantine: directory)
        reader.keptCommitLimit = Self.secondReaderKeptCommits
        if let borrowed {
            try Self.borrow(borrowed.objects, of: borrowed.path, into: reader, readingPacksAs: repository.directPackReadsForAnotherThread())
        }
        return reader
    }

    /// The raw bytes of commits `secondReader` keeps.
    static let secondReaderKeptCommits = 2 << 20

    /// Writes `ids`, as `repository` reads them, into the store as one pack (fsynced), each once.
    package func packIntoStore(_ ids: [ObjectID]) throws(GitError) {
        try PackWriter(repository: repository, into: storeObjects + "/pack/").write(ids)
    }

    deinit { discard() }

    /// Lets `repository` read the objects of the repository at `path` (guarded like the store's own), and returns the
    /// references of it matching `pattern`: a fetch from a local store without libgit2's local transport.
    ///
    /// That transport opens the other repository without Truce's loose-object
    /// guard (a truncated object there would hang the sync) and fails the
    /// whole fetch on the first commit it cannot parse; reading the other
    /// store's objects in place lets every head be checked on its own, and
    /// `admit` copies only what the checked heads need.
    package func borrowObjects(of path: String, refsMatching pattern: String) throws(GitError) -> [(name: String, target: ObjectID)] {
        let other = try Repository.openBare(at: path, instrumentation: repository.instrumentation)
        let references = try other.references(matching: pattern)
        let objects = other.gitDirectory + "objects"
        try Self.borrow(objects, of: path, into: repository)
        borrowed = (objects, path)
        return references
    }

    /// Makes `repository` read the objects in `objects`, those of the store at `path`, first, its packs in place
    /// (through `reads`, when given: another thread's reads of the same packs).
    private static func borrow(_ objects: String, of path: String, into repository: Repository, readingPacksAs reads: PackEntries? = nil)
        throws(GitError)
    {
        var odb: OpaquePointer?
        try check(git_repository_odb(&odb, repository.handle), "open object database")
        defer { git_odb_free(odb) }
        try check(git_odb_add_disk_alternate(odb, objects), "read the objects of \(path)")
        // Nearly every read is of an object the other store holds: its packs are asked first, before the store's, which
        // a sync in batches fills as it goes and which such a read would otherwise search in vain, pack by pack.
        var packs: UnsafeMutablePointer<git_odb_backend>?
        try check(git_odb_backend_pack(&packs, objects), "read the packs of \(path)")
        try repository.attach(packs, priority: Repository.borrowedPackPriority, asAlternate: true, "the packs of \(path)")
        // The store's guard would otherwise look for a loose copy in the store of every object read from there:
        // three system calls an object, most of a first sync's time.
        try check(truce_odb_guards_also_packed(odb, objects), "tell the store's guard of \(path)")
        try check(truce_odb_add_loose_object_guard(odb, objects, nil, Repository.looseGuardPriority), "guard the loose objects of \(path)")
        if let reads { repository.directPackReads = reads } else { repository.directPackReads = try PackEntries(objectsDirectory: objects) }
    }

    /// The ids of the objects in the packs whose indexes are `indexes`, when they are few (none for no pack); nil when
    /// there are more than a lookup per incoming object would cost, or an index cannot be read.
    static func fewObjects(in indexes: [String]) -> Set<ObjectID>? {
        var ids = Set<ObjectID>()
        for index in indexes {
            // An index of more than 4,096 objects is over 100 KB: looking objects up in the packs is the cheaper way.
            guard let size = DurableFiles.status(index)?.size, size < 8 + 256 * 4 + 4_096 * 28 + 40,
                let listed = PackIndex.objectIDs(atPath: index)
            else { return nil }
            ids.formUnion(listed)
        }
        return ids
    }

    /// Brings into the store the commits `tips` reach and `hidden` do not, with their trees and blobs.
    ///
    /// When every object downloaded is in `checked` (nothing was refused and
    /// the remote sent nothing the checks did not read), the downloaded pack
    /// and its index move into the store as they are, as git's receive-pack
    /// migrates its quarantine: no second compression of what just arrived.
    /// Borrowed objects (`borrowObjects`) are no pack of ours: when `checked` holds
    /// all that the tips bring, exactly those are packed into the store, whole,
    /// copied as the other store's packs hold them where they can be.
    /// A download checked in parts (`isWhole` false: `checked` holds all that this part's tips bring, and the download
    /// holds more) is copied the same way, part by part, from its own packs.
    /// Otherwise only the objects the tips need are packed anew into the store.
    /// `progress` hears how many objects of how many were written, when Truce writes them itself.
    package func admit(
        _ tips: [ObjectID], hiding hidden: [ObjectID], whenOnly checked: CheckedObjects? = nil, isWhole: Bool = true,
        progress: ((Int, Int) -> Void)? = nil
    ) throws(GitError) {
        guard !tips.isEmpty else { return }
        if let checked, let source = borrowed?.objects ?? (isWhole ? nil : directory + "/objects") {
            // libgit2's pack builder walks the history again and its indexer maps each object it writes back in:
            // most of a first sync's time. The checks read every object the tips bring, and nothing else.
            // Only what the store lacked: a sync that brings nothing new writes nothing. What an earlier batch of
            // this sync brought is not looked up (a first sync would search every pack it wrote, for each object): an
            // object two batches share (rare) is copied once more, into the later batch's pack.
            var missing = checked.inOrder
            if let few = Self.fewObjects(in: storePacksBefore) {
                // A store with a few objects (a new store's one commit of its branch, before its first sync): their ids in
                // a set cost less than a lookup in the packs for each object the sync brings.
                // Looked for first: removing none would still copy the list, which `checked` shares.
                if !few.isEmpty, missing.contains(where: few.contains) { missing.removeAll { few.contains($0) } }
            } else {
                try withPacks(storePacksBefore) { packs in
                    missing.removeAll { id in
                        var oid = id.raw
                        return git_odb_exists_ext(packs, &oid, UInt32(GIT_ODB_LOOKUP_NO_REFRESH.rawValue)) == 1
                    }
                }
            }
            // Copied as the other store deflated them, each proven by its hash: deflating them all again was most of
            // the time left. `missing` holds each object once: no set to check it. What the checks proved as they read
            // the borrowed packs (`directPackReads`) is copied without proving it again.
            let entries: PackEntries
            if let reads = repository.directPackReads {
                entries = reads
            } else {
                // The download's own packs: libgit2's indexer hashed every object as it came and wrote the index here,
                // CRCs too, so an entry's CRC proves it as it proves the store's own (a first sync in batches copied
                // each batch's part of the download inflating and hashing every object again).
                entries = try PackEntries(objectsDirectory: source, provenBy: .indexCRC)
            }
            defer { entries.forgetRemembered() }
            try PackWriter(repository: repository, into: storeObjects + "/pack/").write(
                missing, copyingFrom: entries, distinct: true, progress: { done, total, _ in progress?(done, total) })
            return
        }
        if let checked, try movePacks(ifAllIn: checked) { return }
        var builder: OpaquePointer?
        try check(git_packbuilder_new(&builder, repository.handle), "start pack")
        defer { git_packbuilder_free(builder) }
        _ = try repository.withWalker(from: tips, hiding: hidden) { walker throws(GitError) in
            try check(git_packbuilder_insert_walk(builder, walker), "add checked versions to pack")
        }
        // Every tip may be one this store has already: then there is nothing to write, not an empty pack.
        guard git_packbuilder_object_count(builder) > 0 else { return }
        // libgit2 fsyncs the pack and its index (fsync is on for every store) before the caller publishes a ref.
        try check(git_packbuilder_write(builder, storeObjects + "/pack", 0, nil, nil), "write checked versions into the store")
    }

    /// Moves the downloaded packs into the store if they hold only objects in `checked` and nothing came loose;
    /// false, with nothing moved, otherwise.
    private func movePacks(ifAllIn checked: CheckedObjects) throws(GitError) -> Bool {
        let manager = FileManager.default
        let objects = directory + "/objects/"
        let loose = ((try? manager.contentsOfDirectory(atPath: objects)) ?? []).filter { $0.count == 2 }
        guard loose.allSatisfy({ ((try? manager.contentsOfDirectory(atPath: objects + $0)) ?? []).isEmpty }) else { return false }
        let packDirectory = objects + "pack/"
        let indexes = ((try? manager.contentsOfDirectory(atPath: packDirectory)) ?? []).filter { $0.hasSuffix(".idx") }
        // Objects borrowed from a local store, not downloaded, are in no pack of ours: they must be copied.
        guard !indexes.isEmpty else { return false }
        for index in indexes {
            guard let ids = PackIndex.objectIDs(atPath: packDirectory + index), ids.allSatisfy(checked.contains) else { return false }
        }
        // The pack before its index: a reader finds a pack by its index, so it never sees one without the other.
        for index in indexes {
            let base = String(index.dropLast(4))
            for suffix in [".pack", ".rev", ".idx"] where manager.fileExists(atPath: packDirectory + base + suffix) {
                let target = storeObjects + "/pack/" + base + suffix
                if manager.fileExists(atPath: target) { continue }  // the same pack, by its name
                guard rename(packDirectory + base + suffix, target) == 0 else {
                    throw DurableFiles.failure("move \(base + suffix) into the store")
                }
            }
        }
        DurableFiles.syncDirectory(storeObjects + "/pack")
        return true
    }

    /// Calls `body` with an object database of the packs whose indexes are `indexes` alone: asking it costs an index
    /// lookup, never a look for a loose file (a loose object it misses is only packed once more). A pack that is gone
    /// (folded into another since) is left out: its objects are then only packed once more.
    private func withPacks(_ indexes: [String], _ body: (OpaquePointer?) throws(GitError) -> Void) throws(GitError) {
        var odb: OpaquePointer?
        try check(git_odb_new(&odb), "open the store's packs")
        defer { git_odb_free(odb) }
        for index in indexes {
            var pack: UnsafeMutablePointer<git_odb_backend>?
            guard git_odb_backend_one_pack(&pack, index) == 0 else { continue }
            let added = git_odb_add_backend(odb, pack, 1)
            guard added == 0 else {
                pack?.pointee.free(pack)
                throw GitError.last("open the store's packs", code: added)
            }
        }
        try body(odb)
    }

    private func discard() {
        var odb: OpaquePointer?
        if git_repository_odb(&odb, repository.handle) == 0 {
            repository.instrumentation.countLooseObjectLooks(truce_odb_guard_looks(odb))
            git_odb_free(odb)
        }
        try? FileManager.default.removeItem(atPath: directory)
    }
}
