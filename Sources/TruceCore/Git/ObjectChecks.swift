import CLibgit2

/// Checks of objects another repository sent, in the spirit of `git fsck`: what git itself would refuse.
extension Repository {
    /// A commit's raw bytes as stored, nil when the object is not a commit.
    func rawCommit(_ id: ObjectID) throws(GitError) -> [UInt8]? {
        var odb: OpaquePointer?
        try check(git_repository_odb(&odb, handle), "open object database")
        defer { git_odb_free(odb) }
        var oid = id.raw
        var object: OpaquePointer?
        try check(git_odb_read(&object, odb, &oid), "read object \(id)")
        defer { git_odb_object_free(object) }
        guard git_odb_object_type(object) == GIT_OBJECT_COMMIT, let data = git_odb_object_data(object) else { return nil }
        return Array(UnsafeRawBufferPointer(start: data, count: git_odb_object_size(object)))
    }

    /// Why libgit2 would refuse `name` as a tree entry here (what a local save runs into), nil when it takes it.
    func treeEntryNameProblem(_ name: String, id: ObjectID, isTree: Bool) -> String? {
        // A name libgit2 took once it takes again (the entry's object is checked on its own): documents share folders.
        let verdictKey = (isTree ? "tree " : "blob ") + name
        if acceptedEntryNames.contains(verdictKey) { return nil }
        var builder: OpaquePointer?
        guard git_treebuilder_new(&builder, handle, nil) == 0 else { return "cannot start a tree" }
        defer { git_treebuilder_free(builder) }
        var oid = id.raw
        let code = git_treebuilder_insert(nil, builder, name, &oid, isTree ? GIT_FILEMODE_TREE : GIT_FILEMODE_BLOB)
        if code < 0 { return GitError.last("", code: code).message }
        if isTree { acceptedEntryNames.insert(verdictKey) }
        return nil
    }
}

extension ObjectID {
    /// The empty tree, the tree of every deletion.
    static let emptyTree = ObjectID(hex: "4b825dc642cb6eb9a060e54bf8d69288fbee4904")!

    /// The id of the tree git writes for one entry: `mode name\0<20 bytes>`, as `git mktree` would.
    static func treeHash(ofEntry name: String, id: ObjectID, isTree: Bool) -> ObjectID {
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
/// (`encoding`, `gpgsig`, …) are git's to allow and are allowed.
func commitHeaderProblem(_ raw: [UInt8]) -> String? {
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
