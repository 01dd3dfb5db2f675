internal import CGitShim
internal import CLibgit2

/// Re-implements git's commit and one-entry tree objects, read raw and hashed (fsck-msgids, git-mktree): byte-compatible with git, listed in TruceGit/README.md.
///
/// Checks of objects another repository sent, in the spirit of `git fsck`: what git itself would refuse.
extension Repository {
    /// A commit's raw bytes as stored, nil when the object is not a commit.
    package func rawCommit(_ id: ObjectID) throws(GitError) -> [UInt8]? {
        try rawCommit(id, missingIsNil: false)
    }

    /// A commit's raw bytes as stored, nil when the object is missing or not a commit.
    package func rawCommitIfPresent(_ id: ObjectID) throws(GitError) -> [UInt8]? {
        try rawCommit(id, missingIsNil: true)
    }

    /// A commit's raw bytes as stored, nil when the object is missing or not a commit, kept in `keptCommits` only
    /// while it has room: for a caller that reads many commits long before it reads them again, in the same order
    /// (a sync's listing, then its checks). The first ones read are then kept for the second reading, and the later
    /// ones do not push them out (to be pushed out in turn before they are read again).
    package func rawCommitIfPresentKeepingWhileRoom(_ id: ObjectID) throws(GitError) -> [UInt8]? {
        try rawCommit(id, missingIsNil: true, startingOverWhenFull: false)
    }

    /// What `readCommitsAhead` read: the bytes of the commits its `select` picked, and the ids it could not read from
    /// the packs (not there whole, or not a commit), which a caller reads the usual way.
    package struct CommitsReadAhead {
        package var selected: [ObjectID: [UInt8]] = [:]
        package var unread: Set<ObjectID> = []

        package init() {}
    }

    /// Reads the commits `ids` from `directPackReads`, in the order the packs hold them, a large run divided between
    /// two threads (`DividedPackReads`), and keeps each as `rawCommitIfPresentKeepingWhileRoom` would, while there is
    /// room; returns the bytes of those `select` picks, and the ids not read. `select` runs on the thread that read the
    /// commit: it must be a function of the bytes alone. Nil when this handle reads no packs in place.
    ///
    /// A sync's listing reads every head a manifest lists, to tell the manifest's parts from its versions; one at a
    /// time, in the manifest's order, on one thread, they were a sixth of a first sync of 10,000 documents.
    package func readCommitsAhead(_ ids: [ObjectID], selecting select: ([UInt8]) -> Bool) -> CommitsReadAhead? {
        guard let entries = directPackReads else { return nil }
        let reads = DividedPackReads(
            entries, makingSecondWith: { self.directPackReadsForAnotherThread() }, instrumentation: instrumentation,
            orderedAtOnce: Self.commitsReadAheadAtOnce)
        var result = CommitsReadAhead()
        var full = keptCommits == nil
        for start in stride(from: 0, to: ids.count, by: Self.commitsReadAheadAtOnce) {
            let run = Array(ids[start..<min(start + Self.commitsReadAheadAtOnce, ids.count)])
            // Parsed for keeping on the thread that read it, while there is room.
            let parsing = !full
            let (parts, unread) = reads.read(run, ofType: GIT_OBJECT_COMMIT, remembering: false, into: [CommitReadAhead]()) {
                part, position, raw in
                let record = parsing ? CommitRecord(id: run[position], fsckCleanRaw: raw) : nil
                part.append(CommitReadAhead(position: position, raw: raw, record: record, isSelected: select(raw)))
                return true
            }
            for part in parts {
                for commit in part {
                    let id = run[commit.position]
                    if commit.isSelected { result.selected[id] = commit.raw }
                    guard !full, keptCommits?[id] == nil else { continue }
                    let before = keptCommitBytes
                    keep(commit.raw, parsed: commit.record, ofCommit: id, startingOverWhenFull: false)
                    full = keptCommitBytes == before
                }
            }
            result.unread.formUnion(unread.lazy.map { run[$0] })
        }
        return result
    }

    /// A commit `readCommitsAhead` read: its place in the run, its bytes, what they record (when parsed for keeping),
    /// and whether the caller picked it.
    private struct CommitReadAhead {
        let position: Int
        let raw: [UInt8]
        let record: CommitRecord?
        let isSelected: Bool
    }

    /// The most commits `readCommitsAhead` reads at once.
    static let commitsReadAheadAtOnce = 1 << 14

    private func rawCommit(_ id: ObjectID, missingIsNil: Bool, startingOverWhenFull: Bool = true) throws(GitError) -> [UInt8]? {
        if let kept = keptCommits?[id] { return kept.raw }
        // A read kept only while there is room (a listing's) is not the checks' read: its proof is not kept for the copy.
        guard let raw = try rawObject(id, ofType: GIT_OBJECT_COMMIT, missingIsNil: missingIsNil, rememberingProof: startingOverWhenFull)
        else { return nil }
        keep(raw, ofCommit: id, startingOverWhenFull: startingOverWhenFull)
        return raw
    }

    /// A tree's raw bytes as stored, nil when the object is missing or not a tree.
    package func rawTreeIfPresent(_ id: ObjectID) throws(GitError) -> [UInt8]? {
        try rawObject(id, ofType: GIT_OBJECT_TREE, missingIsNil: true)
    }

    /// An object's bytes as stored, nil when it is of another type (or missing, with `missingIsNil`).
    ///
    /// Read past libgit2's object cache (see `uncached_read.c`): these reads check what another store sent, and walk
    /// a history (`forEachCommit`), once each. `entries`, else `directPackReads`, is asked first; with
    /// `rememberingProof`, what it proves is remembered for the copy of the same object (see `PackEntries.read`).
    func rawObject(
        _ id: ObjectID, ofType type: git_object_t, missingIsNil: Bool, rememberingProof: Bool = true, from entries: PackEntries? = nil
    ) throws(GitError) -> [UInt8]? {
        if let found = (entries ?? directPackReads)?.read(id, remembering: rememberingProof) { return found.type == type ? found.bytes : nil }
        instrumentation.countReadThroughLibgit2()
        var odb: OpaquePointer?
        try check(git_repository_odb(&odb, handle), "open object database")
        defer { git_odb_free(odb) }
        var oid = id.raw
        if let found = try readPastCache(id, in: odb) { return found.type == type.rawValue ? found.bytes : nil }
        // Not in any backend as it stands: libgit2 looks again for new packs (and knows the empty tree).
        var object: OpaquePointer?
        let code = git_odb_read(&object, odb, &oid)
        if missingIsNil, code == GIT_ENOTFOUND.rawValue { return nil }
        try check(code, "read object \(id)")
        defer { git_odb_object_free(object) }
        guard git_odb_object_type(object) == type else { return nil }
        guard let data = git_odb_object_data(object) else { return [] }
        return Array(UnsafeRawBufferPointer(start: data, count: git_odb_object_size(object)))
    }
}

extension ObjectID {
    /// The empty tree, the tree of every deletion.
    package static let emptyTree = ObjectID(hex: "4b825dc642cb6eb9a060e54bf8d69288fbee4904")!

    /// The id of the tree git writes for one entry: `mode name\0<20 bytes>`, as `git mktree` would.
    package static func treeHash(ofEntry name: String, id: ObjectID, isTree: Bool) -> ObjectID {
        Libgit2.ensureInitialized()
        let bytes = Array((isTree ? "40000 " : "100644 ").utf8) + Array(name.utf8) + [0] + id.bytes
        var oid = git_oid()
        _ = bytes.withUnsafeBytes { git_odb_hash(&oid, $0.baseAddress, $0.count, GIT_OBJECT_TREE) }
        return ObjectID(oid)
    }
}

/// What `git fsck` finds wrong in a commit's header, nil when nothing.
///
/// The rules of git's `fsck_commit` and `fsck_ident`: a header ended by a
/// blank line without NUL; `tree`, then `parent` lines, then exactly one
/// `author` and one `committer`, ids as 40 lowercase hex digits; an ident
/// `Name <email> seconds +hhmm` with a space before `<`, no `<`/`>` inside,
/// digits without leading zeros, at most 2^63 - 1, and a four-digit zone. Later headers
/// (`encoding`, `gpgsig`, …) are git's to allow and are allowed, except a
/// second `author` or `committer` after the committer: git 2.39's fsck takes
/// it, but one reader could take that date and another skip it
/// (`RawCommitReadingTests.refusedBeyondGit`).
package func commitHeaderProblem(_ raw: [UInt8]) -> String? {
    raw.withUnsafeBufferPointer { bytes in
        guard case .failure(let problem) = CommitHeader.scan(bytes) else { return nil }
        return problem.message
    }
}

extension CommitRecord {
    /// The commit `raw` holds, read as libgit2 reads it, for bytes `commitHeaderProblem` finds nothing wrong with
    /// (nil otherwise): the checks of incoming commits read each one once, not once raw and once through libgit2.
    ///
    /// libgit2's reading, kept: names and emails trimmed of ASCII space, the
    /// message after the blank line without its leading newlines and up to a NUL.
    package init?(id: ObjectID, fsckCleanRaw raw: [UInt8]) {
        let record: CommitRecord? = raw.withUnsafeBufferPointer { bytes in
            guard case .success(let header) = CommitHeader.scan(bytes), let tree = ObjectID(hexBytes: bytes[header.tree]),
                let author = Signature(fsckCleanIdent: bytes[header.author]),
                let committer = Signature(fsckCleanIdent: bytes[header.committer])
            else { return nil }
            var parents: [ObjectID] = []
            parents.reserveCapacity(header.parents.count)
            for parent in header.parents {
                guard let id = ObjectID(hexBytes: bytes[parent]) else { return nil }
                parents.append(id)
            }
            var start = header.end + 2
            while start < bytes.count, bytes[start] == 0x0A { start += 1 }
            let stop = bytes[start...].firstIndex(of: 0) ?? bytes.count
            let message = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<stop]), as: UTF8.self)
            return CommitRecord(id: id, tree: tree, parents: parents, author: author, committer: committer, message: message)
        }
        guard let record else { return nil }
        self = record
    }
}

extension Signature {
    /// `Name <email> seconds +hhmm`, as `CommitHeader` accepts it.
    fileprivate init?(fsckCleanIdent ident: Slice<UnsafeBufferPointer<UInt8>>) {
        guard let open = ident.firstIndex(of: UInt8(ascii: "<")), let close = ident[open...].firstIndex(of: UInt8(ascii: ">")) else {
            return nil
        }
        let isSpace = { (byte: UInt8) in byte == 0x20 || (0x09...0x0D).contains(byte) }
        func trimmed(_ range: Range<Int>) -> String {
            var (lower, upper) = (range.lowerBound, range.upperBound)
            while lower < upper, isSpace(ident.base[lower]) { lower += 1 }
            while upper > lower, isSpace(ident.base[upper - 1]) { upper -= 1 }
            return String(decoding: UnsafeBufferPointer(rebasing: ident.base[lower..<upper]), as: UTF8.self)
        }
        // After `>`: a space, the seconds (at most 19 digits), a space and a sign with four digits (`CommitHeader`).
        var index = close + 2
        var seconds: Int64 = 0
        while ident.base[index] != UInt8(ascii: " ") {
            let (times, overflowed) = seconds.multipliedReportingOverflow(by: 10)
            let (sum, overflowedAgain) = times.addingReportingOverflow(Int64(ident.base[index] - 0x30))
            guard !overflowed, !overflowedAgain else { return nil }
            (seconds, index) = (sum, index + 1)
        }
        let sign = ident.base[index + 1]
        let zone = (index + 2..<index + 6).reduce(Int32(0)) { $0 * 10 + Int32(ident.base[$1] - 0x30) }
        // libgit2 keeps a zone only up to 14 hours and 59 minutes, as real ones are; it reads any other as UTC.
        let minutes = zone / 100 <= 14 && zone % 100 <= 59 ? zone / 100 * 60 + zone % 100 : 0
        self.init(
            name: trimmed(ident.startIndex..<(open - 1)), email: trimmed((open + 1)..<close), time: seconds,
            offsetMinutes: sign == UInt8(ascii: "-") ? -minutes : minutes)
    }
}
