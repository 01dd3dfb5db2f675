internal import CGitShim
internal import CLibgit2

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension Repository {
    /// True when `descendant` has `ancestor` in its history (false when they are equal).
    package func isDescendant(_ descendant: ObjectID, of ancestor: ObjectID) throws(GitError) -> Bool {
        var commit = descendant.raw
        var base = ancestor.raw
        return try check(git_graph_descendant_of(handle, &commit, &base), "compare \(descendant) with \(ancestor)") == 1
    }

    /// The nearest common ancestor of all `commits`, nil when their histories are unrelated.
    package func mergeBase(of commits: [ObjectID]) throws(GitError) -> ObjectID? {
        guard commits.count > 1 else { return commits.first }
        var raw = commits.map(\.raw)
        var oid = git_oid()
        let code =
            raw.count == 2
            ? git_merge_base(&oid, handle, &raw[0], &raw[1])
            : git_merge_base_octopus(&oid, handle, raw.count, &raw)
        if code == GIT_ENOTFOUND.rawValue { return nil }
        try check(code, "find merge base")
        return ObjectID(oid)
    }

}

extension Repository {
    /// The merge base of `first` against all `others` together, as `git merge-base first others…`; nil when unrelated.
    package func mergeBase(of first: ObjectID, against others: [ObjectID]) throws(GitError) -> ObjectID? {
        guard !others.isEmpty else { return first }
        var raw = [first.raw] + others.map(\.raw)
        var oid = git_oid()
        let code = git_merge_base_many(&oid, handle, raw.count, &raw)
        if code == GIT_ENOTFOUND.rawValue { return nil }
        try check(code, "find merge base")
        return ObjectID(oid)
    }
}

extension Repository {
    /// Calls `visit` with each commit `tips` reach (the tips included) and its tree, once each, in no set order.
    ///
    /// Prune reaches every commit of a store twice, checking the journal and
    /// marking, and a first push every commit it sends. A revision walker
    /// sorts, and reads each commit into a list of its own, before it returns
    /// the first; this reads each once, past libgit2's object cache, and keeps
    /// only the set of commits seen.
    ///
    /// A commit for which `entering` is false is neither visited nor read, and neither are its parents through it.
    package func forEachCommit(
        reachableFrom tips: [ObjectID], entering: (ObjectID) -> Bool = { _ in true },
        _ visit: (_ commit: ObjectID, _ tree: ObjectID) throws(GitError) -> Void
    ) throws(GitError) {
        try forEachCommit(reachableFrom: tips, entering: entering) { (commit, tree, _) throws(GitError) in try visit(commit, tree) }
    }

    /// `forEachCommit(reachableFrom:entering:_:)`, handing `visit` each commit's message too, as its bytes (valid
    /// during the call): a push counts what it sends by them without reading any commit again. Each commit is read
    /// from `entries` first, when given, which remember where for a copy of it (`pushLocally`).
    package func forEachCommit(
        reachableFrom tips: [ObjectID], entering: (ObjectID) -> Bool = { _ in true }, readingFrom entries: PackEntries? = nil,
        _ visit: (_ commit: ObjectID, _ tree: ObjectID, _ message: UnsafeRawBufferPointer) throws(GitError) -> Void
    ) throws(GitError) {
        var seen = Set<ObjectID>()
        var pending = tips
        while let id = pending.popLast() {
            guard seen.insert(id).inserted, entering(id) else { continue }
            let parents = try readCommitParts(of: id, from: entries) { (tree, message) throws(GitError) in try visit(id, tree, message) }
            for parent in parents where !seen.contains(parent) { pending.append(parent) }
        }
    }

    /// Calls `body` with a commit's tree and message and returns its parents, read from its bytes past libgit2's
    /// object cache: a first push of a million documents walks a million commits, which that cache would keep parsed
    /// (about ten times their bytes) though the walk never reads one again. A commit that is missing, is no commit, or
    /// that git's fsck rules refuse is read by libgit2, as before, and fails or passes as libgit2 decides (`GraphTests`).
    func readCommitParts(
        of id: ObjectID, from entries: PackEntries?, _ body: (_ tree: ObjectID, _ message: UnsafeRawBufferPointer) throws(GitError) -> Void
    ) throws(GitError) -> [ObjectID] {
        if let raw = try rawObject(id, ofType: GIT_OBJECT_COMMIT, missingIsNil: true, from: entries), let parsed = Self.commitParts(raw) {
            try raw.withUnsafeBytes { bytes in
                Result { () throws(GitError) in try body(parsed.tree, UnsafeRawBufferPointer(rebasing: bytes[parsed.message...])) }
            }.get()
            return parsed.parents
        }
        var oid = id.raw
        var commit: OpaquePointer?
        try check(git_commit_lookup(&commit, handle, &oid), "read commit \(id)")
        defer { git_commit_free(commit) }
        let message =
            git_commit_message_raw(commit).map { UnsafeRawBufferPointer(start: $0, count: strlen($0)) }
            ?? UnsafeRawBufferPointer(start: nil, count: 0)
        try body(ObjectID(git_commit_tree_id(commit).pointee), message)
        return (0..<git_commit_parentcount(commit)).map { ObjectID(git_commit_parent_id(commit, $0).pointee) }
    }

    /// A commit's tree and parents, and where its message starts, from its raw bytes; nil when its header does not pass
    /// git's fsck rules (`CommitHeader`).
    static func commitParts(_ raw: [UInt8]) -> (tree: ObjectID, parents: [ObjectID], message: Int)? {
        raw.withUnsafeBufferPointer { bytes in
            guard case .success(let header) = CommitHeader.scan(bytes), let tree = ObjectID(hexBytes: bytes[header.tree]) else { return nil }
            let parents = header.parents.compactMap { ObjectID(hexBytes: bytes[$0]) }
            // The message follows the blank line, two bytes on from where `end` puts its first line feed.
            return parents.count == header.parents.count ? (tree, parents, min(header.end + 2, bytes.count)) : nil
        }
    }

    /// The commits reachable from `tips` but not from `hidden`: newest first (children before parents),
    /// or with `oldestFirst` parents before children.
    package func walk(from tips: [ObjectID], hiding hidden: [ObjectID] = [], oldestFirst: Bool = false) throws(GitError) -> [ObjectID] {
        // A root commit with nothing hidden is its whole history, and most documents of a first sync have one version:
        // no walker to set up.
        if tips.count == 1, hidden.isEmpty, try parentCount(of: tips[0]) == 0 { return tips }
        let order = oldestFirst ? GIT_SORT_TOPOLOGICAL.rawValue | GIT_SORT_REVERSE.rawValue : GIT_SORT_TOPOLOGICAL.rawValue | GIT_SORT_TIME.rawValue
        return try withWalker(from: tips, hiding: hidden, sorting: order) { walker throws(GitError) in
            var found: [ObjectID] = []
            var oid = git_oid()
            while true {
                let code = git_revwalk_next(&oid, walker)
                if code == GIT_ITEROVER.rawValue { break }
                try check(code, "walk history")
                found.append(ObjectID(oid))
            }
            return found
        }
    }

    private func parentCount(of id: ObjectID) throws(GitError) -> UInt32 {
        var oid = id.raw
        var commit: OpaquePointer?
        try check(git_commit_lookup(&commit, handle, &oid), "walk history from \(id)")
        defer { git_commit_free(commit) }
        return git_commit_parentcount(commit)
    }

    /// Calls `body` with a revision walker set up to visit what `tips` reach and `hidden` do not; freed afterwards.
    package func withWalker<Value>(
        from tips: [ObjectID], hiding hidden: [ObjectID], sorting order: UInt32 = GIT_SORT_NONE.rawValue,
        _ body: (OpaquePointer?) throws(GitError) -> Value
    ) throws(GitError) -> Value {
        var walker: OpaquePointer?
        try check(git_revwalk_new(&walker, handle), "start history walk")
        defer { git_revwalk_free(walker) }
        try check(git_revwalk_sorting(walker, order), "sort history walk")
        for tip in tips {
            var oid = tip.raw
            try check(git_revwalk_push(walker, &oid), "walk history from \(tip)")
        }
        for commit in hidden {
            var oid = commit.raw
            try check(git_revwalk_hide(walker, &oid), "hide \(commit) from history walk")
        }
        return try body(walker)
    }
}

extension Repository {
    /// Every merge base of `first` against all `others` together, as `git merge-base --all first others…`.
    ///
    /// Several come back from criss-cross histories (two resolutions of the same heads); empty when unrelated.
    package func mergeBases(of first: ObjectID, against others: [ObjectID]) throws(GitError) -> [ObjectID] {
        guard !others.isEmpty else { return [first] }
        var raw = [first.raw] + others.map(\.raw)
        var bases = git_oidarray()
        let code = git_merge_bases_many(&bases, handle, raw.count, &raw)
        if code == GIT_ENOTFOUND.rawValue { return [] }
        try check(code, "find merge bases")
        defer { git_oidarray_dispose(&bases) }
        return (0..<bases.count).map { ObjectID(bases.ids[$0]) }
    }
}
