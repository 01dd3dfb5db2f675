internal import CGitShim
internal import CLibgit2

/// An open bare git repository; owns the libgit2 handle and frees it.
///
/// Not thread-safe, like the handle it wraps: callers confine it to one
/// lock or task at a time.
package final class Repository {
    package let handle: OpaquePointer
    /// The repository directory as it was given.
    package let path: String
    /// The counters and fault points tests watch (see `Instrumentation`), shared by every handle of one store.
    package let instrumentation: Instrumentation
    /// The `packed-refs` file as last read, read again when its stamp changes.
    package var packedReferencesCache: PackedReferences?
    /// Whether the config says `core.logAllRefUpdates=always`, once read (see `updateReference`).
    var logsAllReferenceUpdatesCache: Bool?
    /// Where the names of entries are tried once an entry of their kind has passed here (see `treeEntryNameProblem`).
    var entryNameCheck: EntryNameCheck?
    /// The kinds of entry (blob, tree) that have passed `treeEntryNameProblem` here.
    var entryKindsPassed = EntryNameCheck.Kinds()
    /// Commits read raw, with what they record when git's checks pass them, kept when a caller reads the same commits
    /// several times (a quarantine's checks): nil keeps none.
    package var keptCommits: [ObjectID: (raw: [UInt8], record: CommitRecord?)]?
    /// The memory `keptCommits` may take, as `keptCommitCost` counts it. The checks read a commit again soon after its
    /// first read, so a full cache starts over rather than stop keeping: its memory follows the limit, not the number
    /// of commits a sync brings.
    package var keptCommitLimit = 32 << 20
    private(set) var keptCommitBytes = 0
    /// What `takeKeptCommits` added to `keptCommitLimit`, given back by `forgetKeptCommits`.
    private var takenCommitBytes = 0

    /// Takes what `other` keeps of commits `ids` into this handle's `keptCommits`, past its limit, which grows by as
    /// much until `forgetKeptCommits`: a first sync's listing keeps the heads' commits in the first handle, and the
    /// checks on a second handle (`Quarantine.secondReader`) read their half of them again otherwise.
    package func takeKeptCommits(of ids: some Sequence<ObjectID>, from other: Repository) {
        guard keptCommits != nil else { return }
        for id in ids where keptCommits?[id] == nil {
            guard let kept = other.keptCommits?.removeValue(forKey: id) else { continue }
            let cost = Self.keptCommitCost(of: kept.raw)
            other.keptCommitBytes -= cost
            keptCommits?[id] = kept
            (keptCommitBytes, keptCommitLimit, takenCommitBytes) = (keptCommitBytes + cost, keptCommitLimit + cost, takenCommitBytes + cost)
        }
    }

    /// Forgets the commit `id` if this handle keeps it: a caller done with it (a head whose check is over) leaves its
    /// room to the commits still to be read.
    package func forgetKeptCommit(_ id: ObjectID) {
        guard let kept = keptCommits?.removeValue(forKey: id) else { return }
        keptCommitBytes -= Self.keptCommitCost(of: kept.raw)
    }

    /// Forgets every commit this handle keeps, and gives back what `takeKeptCommits` added to its limit.
    package func forgetKeptCommits() {
        guard keptCommits != nil else { return }
        keptCommits = [:]
        (keptCommitBytes, keptCommitLimit, takenCommitBytes) = (0, keptCommitLimit - takenCommitBytes, 0)
    }

    /// What keeping `raw` costs: its bytes, the record parsed from them (about as many again), and a dictionary slot.
    package static func keptCommitCost(of raw: [UInt8]) -> Int { 2 * raw.count + 256 }

    /// Keeps `raw` as the bytes of commit `id` when `keptCommits` is on, first letting go of all it kept when the
    /// limit would be passed (or, without `startingOverWhenFull`, not keeping it then).
    package func keep(_ raw: [UInt8], ofCommit id: ObjectID, startingOverWhenFull: Bool = true) {
        keep(raw, parsed: CommitRecord(id: id, fsckCleanRaw: raw), ofCommit: id, startingOverWhenFull: startingOverWhenFull)
    }

    /// `keep(_:ofCommit:startingOverWhenFull:)` of a commit parsed already, `record` (nil for one git's fsck refuses).
    func keep(_ raw: [UInt8], parsed record: CommitRecord?, ofCommit id: ObjectID, startingOverWhenFull: Bool) {
        guard keptCommits != nil else { return }
        let cost = Self.keptCommitCost(of: raw)
        guard cost <= keptCommitLimit else { return }
        if keptCommitBytes + cost > keptCommitLimit {
            guard startingOverWhenFull else { return }
            // Its table kept: grown again from nothing, each start-over allocated and freed as much once more.
            keptCommits?.removeAll(keepingCapacity: true)
            keptCommitBytes = 0
        }
        keptCommits?[id] = (raw, record)
        keptCommitBytes += cost
    }

    /// Packs whose whole objects raw reads (`rawCommit`, `rawTreeIfPresent`) take straight from the files, proven, before
    /// asking libgit2: a quarantine's borrowed store (`Quarantine.borrowObjects`), whose copy then takes what the
    /// checks proved without proving it again.
    package var directPackReads: PackEntries? {
        didSet { directPackReadsOnAnotherThread = nil }
    }
    /// The in-memory object store that an outgoing quarantine writes to (`Quarantine(of:outgoing:)`), which the
    /// commits written from their bytes go to straight (`writeCommit(tree:knownParents:author:committer:message:)`).
    var memoryObjects: UnsafeMutablePointer<git_odb_backend>?
    /// Reads of the same packs for a second thread, made once (`directPackReadsForAnotherThread`).
    private var directPackReadsOnAnotherThread: PackEntries?

    /// Reads of `directPackReads`' packs for a second thread, through the same mappings (`PackEntries.forAnotherThread`),
    /// made the first time it is asked for and the same after: a sync's listing and its checks each read on a second
    /// thread in turn, and each new one would halve what the two may keep mapped once more.
    package func directPackReadsForAnotherThread() -> PackEntries? {
        if directPackReadsOnAnotherThread == nil { directPackReadsOnAnotherThread = try? directPackReads?.forAnotherThread() }
        return directPackReadsOnAnotherThread
    }

    init(handle: OpaquePointer, path: String, instrumentation: Instrumentation = Instrumentation()) {
        self.handle = handle
        self.path = path
        self.instrumentation = instrumentation
    }

    deinit { git_repository_free(handle) }

    /// Creates a bare repository at `path` (parents included) and opens it.
    package static func createBare(at path: String, instrumentation: Instrumentation = Instrumentation()) throws(GitError) -> Repository {
        Libgit2.ensureInitialized()
        var options = git_repository_init_options()
        try check(git_repository_init_options_init(&options, UInt32(GIT_REPOSITORY_INIT_OPTIONS_VERSION)), "prepare repository creation")
        options.flags = GIT_REPOSITORY_INIT_BARE.rawValue | GIT_REPOSITORY_INIT_MKPATH.rawValue | GIT_REPOSITORY_INIT_NO_REINIT.rawValue
        var handle: OpaquePointer?
        try check(git_repository_init_ext(&handle, path, &options), "create repository at \(path)")
        return try Repository(handle: handle!, path: path, instrumentation: instrumentation).guardingLooseObjects()
    }

    /// Opens the bare repository at exactly `path`, without searching parent directories.
    package static func openBare(at path: String, instrumentation: Instrumentation = Instrumentation()) throws(GitError) -> Repository {
        Libgit2.ensureInitialized()
        var handle: OpaquePointer?
        try check(git_repository_open_bare(&handle, path), "open repository at \(path)")
        return try Repository(handle: handle!, path: path, instrumentation: instrumentation).guardingLooseObjects()
    }

    /// Puts the loose-object guard in front of libgit2's loose backend (see `loose_guard.c`), and returns self.
    ///
    /// libgit2 1.5.1 loops forever reading a truncated loose object; with the
    /// guard every read of one fails at once with an error naming it.
    func guardingLooseObjects() throws(GitError) -> Repository {
        var odb: OpaquePointer?
        try check(git_repository_odb(&odb, handle), "open object database")
        defer { git_odb_free(odb) }
        // The objects of a linked worktree are in its common directory, which is the git directory itself for a store.
        try check(
            truce_odb_add_loose_object_guard(odb, commonDirectory + "objects", nil, Self.looseGuardPriority), "guard loose objects")
        return self
    }

    /// Opens the object database afresh, guarded as `openBare` guards it, in place of the one the handle has.
    ///
    /// libgit2 learns of new packs on a miss but never forgets one: a pack
    /// another writer folded away keeps its descriptor and its index mapping
    /// in a long-lived handle. After folding small packs, the handle that
    /// folded them drops them this way.
    package func reloadObjectDatabase() throws(GitError) {
        var odb: OpaquePointer?
        try check(git_odb_open(&odb, gitDirectory + "objects"), "reopen object database")
        defer { git_odb_free(odb) }
        try check(truce_odb_add_loose_object_guard(odb, gitDirectory + "objects", nil, Self.looseGuardPriority), "guard loose objects")
        try check(git_repository_set_odb(handle, odb), "reopen object database")
    }

    /// The loose-object guard's place among the object database's backends: the pack backends' priority (2), added
    /// after them. libgit2 orders backends by priority, alternates first among equals and the others as added, so a
    /// read asks every pack first (a packed object, most reads, never reaches the guard, which would look it up in the
    /// packs again) and the guard before any loose backend (1).
    static let looseGuardPriority: Int32 = 2

    /// The packs of a store a quarantine borrows from (`Quarantine.borrowObjects`): above every other backend's (2).
    static let borrowedPackPriority: Int32 = 3

    /// Hands `backend` to the repository's object database at `priority` (higher is asked first); frees it on failure.
    /// An alternate is only read: libgit2 never writes a pack into one.
    func attach(
        _ backend: UnsafeMutablePointer<git_odb_backend>?, priority: Int32, asAlternate: Bool = false, _ what: String
    ) throws(GitError) {
        var odb: OpaquePointer?
        // Until the object database takes the backend over, it is ours to free.
        do throws(GitError) {
            try check(git_repository_odb(&odb, handle), "open object database")
            defer { git_odb_free(odb) }
            let added = asAlternate ? git_odb_add_alternate(odb, backend, priority) : git_odb_add_backend(odb, backend, priority)
            try check(added, "attach \(what)")
        } catch {
            backend?.pointee.free(backend)
            throw error
        }
    }

    /// True when HEAD names a branch that does not exist yet (a new repository's `master`).
    package var isHeadUnborn: Bool { git_repository_head_unborn(handle) == 1 }

    /// Makes HEAD the symbolic reference to `name` (a `refs/heads/…` reference), as `git symbolic-ref HEAD` does.
    package func setHead(to name: String) throws(GitError) {
        try check(git_repository_set_head(handle, name), "point HEAD at \(name)")
    }

    /// The repository's git directory as libgit2 resolved it, with a trailing slash.
    package var gitDirectory: String { String(cString: git_repository_path(handle)) }
    /// Where the objects, refs and config shared by every worktree are (`gitDirectory` but for a linked worktree).
    package var commonDirectory: String { String(cString: git_repository_commondir(handle)) }
}
