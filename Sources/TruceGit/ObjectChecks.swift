internal import CLibgit2

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

    private func rawCommit(_ id: ObjectID, missingIsNil: Bool) throws(GitError) -> [UInt8]? {
        if let kept = keptCommits?[id] { return kept.raw }
        guard let raw = try rawObject(id, ofType: GIT_OBJECT_COMMIT, missingIsNil: missingIsNil) else { return nil }
        keep(raw, ofCommit: id)
        return raw
    }

    /// A tree's raw bytes as stored, nil when the object is missing or not a tree.
    package func rawTreeIfPresent(_ id: ObjectID) throws(GitError) -> [UInt8]? {
        try rawObject(id, ofType: GIT_OBJECT_TREE, missingIsNil: true)
    }

    /// An object's bytes as stored, nil when it is of another type (or missing, with `missingIsNil`).
    ///
    /// Read past libgit2's object cache (see `uncached_read.c`): these reads check what another store sent, once each.
    private func rawObject(_ id: ObjectID, ofType type: git_object_t, missingIsNil: Bool) throws(GitError) -> [UInt8]? {
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

    /// Why libgit2 would refuse `name` as a tree entry here (what a local save runs into), nil when it takes it.
    /// A tree's `id` must name a tree here; a blob's is only read until one blob has passed (see below).
    package func treeEntryNameProblem(_ name: String, id: ObjectID, isTree: Bool) -> String? {
        // A name libgit2 took once it takes again (the entry's object is checked on its own): documents share folders.
        let verdictKey = (isTree ? "tree " : "blob ") + name
        if acceptedEntryNames.contains(verdictKey) { return nil }
        var builder: OpaquePointer?
        guard git_treebuilder_new(&builder, handle, nil) == 0 else { return "cannot start a tree" }
        defer { git_treebuilder_free(builder) }
        // libgit2 also reads the header of the entry's object. The first blob it took stands in for the later ones
        // (the callers check each blob themselves): each blob's own header was a read in the other store's packs,
        // which kept every page of them mapped.
        var oid = (isTree ? id : nameCheckBlob ?? id).raw
        let code = git_treebuilder_insert(nil, builder, name, &oid, isTree ? GIT_FILEMODE_TREE : GIT_FILEMODE_BLOB)
        if code < 0 { return GitError.last("", code: code).message }
        if isTree { acceptedEntryNames.insert(verdictKey) } else if nameCheckBlob == nil { nameCheckBlob = id }
        return nil
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
/// digits without leading zeros and a four-digit zone. Later headers
/// (`encoding`, `gpgsig`, …) are git's to allow and are allowed, except a
/// second `author` or `committer` after the committer: git 2.39's fsck takes
/// it, but one reader could take that date and another skip it
/// (`RawCommitReadingTests.refusedBeyondGit`).
package func commitHeaderProblem(_ raw: [UInt8]) -> String? {
    guard let end = raw.indices.dropLast().first(where: { raw[$0] == 0x0A && raw[$0 + 1] == 0x0A }) else { return "its header is unterminated" }
    let header = raw[..<end]
    if header.contains(0) { return "its header holds a NUL byte" }
    var lines = header.split(separator: 0x0A, omittingEmptySubsequences: false)[...]
    func take(_ field: String) -> ArraySlice<UInt8>? {
        let prefix = Array((field + " ").utf8)
        guard let line = lines.first, line.starts(with: prefix) else { return nil }
        lines.removeFirst()
        return line.dropFirst(prefix.count)
    }
    let isID = { (value: ArraySlice<UInt8>) in
        value.count == 40 && value.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
    guard let tree = take("tree") else { return "it has no tree line first" }
    guard isID(tree) else { return "its tree id is not 40 lowercase hex digits" }
    while let parent = take("parent") {
        guard isID(parent) else { return "a parent id is not 40 lowercase hex digits" }
    }
    guard let author = take("author") else { return "it has no author line after tree and parents" }
    if let problem = identProblem(author) { return "its author \(problem)" }
    guard let committer = take("committer") else { return "it has no committer line after the author" }
    if let problem = identProblem(committer) { return "its committer \(problem)" }
    if lines.contains(where: { $0.starts(with: Array("author ".utf8)) || $0.starts(with: Array("committer ".utf8)) }) {
        return "it has more than one author or committer"
    }
    return nil
}

/// What `git fsck` finds wrong in `Name <email> seconds +hhmm`, nil when nothing.
private func identProblem(_ ident: ArraySlice<UInt8>) -> String? {
    let less = UInt8(ascii: "<"), greater = UInt8(ascii: ">"), space = UInt8(ascii: " ")
    var rest = ident
    if rest.first == less { return "has no name before its email" }
    guard let open = rest.firstIndex(where: { $0 == less || $0 == greater }), rest[open] == less else {
        return "has a '>' in its name or no email"
    }
    guard open > rest.startIndex, rest[open - 1] == space else { return "has no space before its email" }
    rest = rest[(open + 1)...]
    guard let close = rest.firstIndex(where: { $0 == less || $0 == greater }), rest[close] == greater else { return "has a bad email" }
    rest = rest[(close + 1)...]
    guard rest.first == space else { return "has no space before its date" }
    rest = rest.dropFirst()
    let isDigit = { (byte: UInt8) in (0x30...0x39).contains(byte) }
    let seconds = rest.prefix(while: isDigit)
    if seconds.isEmpty { return "has a bad date" }
    if seconds.count > 1 && seconds.first == UInt8(ascii: "0") { return "has a zero-padded date" }
    // git keeps dates in an unsigned 64-bit count; fsck refuses more than fits.
    if seconds.count > 19 { return "has a date that overflows" }
    rest = rest[seconds.endIndex...]
    guard rest.first == space else { return "has a bad date" }
    rest = rest.dropFirst()
    guard rest.count == 5, rest.first == UInt8(ascii: "+") || rest.first == UInt8(ascii: "-"), rest.dropFirst().allSatisfy(isDigit) else {
        return "has a bad time zone"
    }
    return nil
}

extension CommitRecord {
    /// The commit `raw` holds, read as libgit2 reads it, for bytes `commitHeaderProblem` finds nothing wrong with
    /// (nil otherwise): the checks of incoming commits read each one once, not once raw and once through libgit2.
    ///
    /// libgit2's reading, kept: names and emails trimmed of ASCII space, the
    /// message after the blank line without its leading newlines and up to a NUL.
    package init?(id: ObjectID, fsckCleanRaw raw: [UInt8]) {
        guard commitHeaderProblem(raw) == nil,
            let end = raw.indices.dropLast().first(where: { raw[$0] == 0x0A && raw[$0 + 1] == 0x0A })
        else { return nil }
        var lines = raw[..<end].split(separator: 0x0A, omittingEmptySubsequences: false)[...]
        func objectID(after prefix: String) -> ObjectID? {
            guard let line = lines.first, line.starts(with: prefix.utf8) else { return nil }
            lines.removeFirst()
            return ObjectID(hexBytes: line.dropFirst(prefix.utf8.count))
        }
        guard let tree = objectID(after: "tree ") else { return nil }
        var parents: [ObjectID] = []
        while let parent = objectID(after: "parent ") { parents.append(parent) }
        guard let authorLine = lines.popFirst(), let committerLine = lines.popFirst(),
            let author = Signature(fsckCleanIdent: authorLine.dropFirst("author ".utf8.count)),
            let committer = Signature(fsckCleanIdent: committerLine.dropFirst("committer ".utf8.count))
        else { return nil }
        var message = raw[(end + 2)...]
        message = message.drop(while: { $0 == 0x0A })
        message = message.prefix(while: { $0 != 0 })
        self.init(id: id, tree: tree, parents: parents, author: author, committer: committer, message: String(decoding: message, as: UTF8.self))
    }
}

extension Signature {
    /// `Name <email> seconds +hhmm`, as `identProblem` accepts it.
    fileprivate init?(fsckCleanIdent ident: ArraySlice<UInt8>) {
        guard let open = ident.firstIndex(of: UInt8(ascii: "<")), let close = ident.firstIndex(of: UInt8(ascii: ">")), open < close else {
            return nil
        }
        let isSpace = { (byte: UInt8) in byte == 0x20 || (0x09...0x0D).contains(byte) }
        func trimmed(_ bytes: ArraySlice<UInt8>) -> String {
            String(decoding: bytes.drop(while: isSpace).reversed().drop(while: isSpace).reversed(), as: UTF8.self)
        }
        let fields = ident[(close + 1)...].split(separator: 0x20)
        guard fields.count == 2, let seconds = Int64(String(decoding: fields[0], as: UTF8.self)),
            let zone = Int32(String(decoding: fields[1].dropFirst(), as: UTF8.self))
        else { return nil }
        // libgit2 keeps a zone only up to 14 hours and 59 minutes, as real ones are; it reads any other as UTC.
        let minutes = zone / 100 <= 14 && zone % 100 <= 59 ? zone / 100 * 60 + zone % 100 : 0
        self.init(
            name: trimmed(ident[..<(open - 1)]), email: trimmed(ident[(open + 1)..<close]), time: seconds,
            offsetMinutes: fields[1].first == UInt8(ascii: "-") ? -minutes : minutes)
    }
}
