import CLibgit2

extension Repository {
    /// Reads a direct reference, nil when it does not exist.
    func reference(_ name: String) throws(GitError) -> ObjectID? {
        var oid = git_oid()
        let code = git_reference_name_to_id(&oid, handle, name)
        if code == GIT_ENOTFOUND.rawValue { return nil }
        try check(code, "read reference \(name)")
        return ObjectID(oid)
    }

    /// Points `name` at `target` only if it currently points at `expected` (nil: only if it does not exist).
    ///
    /// This is the compare-and-swap every writer relies on: a lost race fails
    /// with `GIT_EMODIFIED` or `GIT_EEXISTS` and changes nothing.
    func updateReference(_ name: String, to target: ObjectID, expecting expected: ObjectID?, message: String) throws(GitError) {
        var newID = target.raw
        var oldID = expected?.raw ?? git_oid()
        var ref: OpaquePointer?
        try check(git_reference_create_matching(&ref, handle, name, &newID, 1, &oldID, message), "update reference \(name)")
        git_reference_free(ref)
    }

    /// Deletes `name` only if it still points at `expected`; false when it was already gone.
    @discardableResult
    func deleteReference(_ name: String, expecting expected: ObjectID) throws(GitError) -> Bool {
        var ref: OpaquePointer?
        let lookup = git_reference_lookup(&ref, handle, name)
        if lookup == GIT_ENOTFOUND.rawValue { return false }
        try check(lookup, "read reference \(name)")
        defer { git_reference_free(ref) }
        guard let target = git_reference_target(ref), ObjectID(target.pointee) == expected else {
            throw GitError(operation: "delete reference \(name)", code: GIT_EMODIFIED.rawValue, errorClass: 0,
                           message: "reference moved since it was read")
        }
        // libgit2 deletes only if the reference still holds the value looked up above.
        let code = git_reference_delete(ref)
        if code == GIT_ENOTFOUND.rawValue { return false }
        try check(code, "delete reference \(name)")
        return true
    }

    /// Every direct reference whose name matches `glob` (fnmatch; the part before the first wildcard is a directory prefix).
    func references(matching glob: String) throws(GitError) -> [(name: String, target: ObjectID)] {
        var iterator: OpaquePointer?
        try check(git_reference_iterator_glob_new(&iterator, handle, glob), "list references \(glob)")
        defer { git_reference_iterator_free(iterator) }
        var found: [(String, ObjectID)] = []
        var ref: OpaquePointer?
        while true {
            let code = git_reference_next(&ref, iterator)
            if code == GIT_ITEROVER.rawValue { break }
            try check(code, "list references \(glob)")
            defer { git_reference_free(ref) }
            if let target = git_reference_target(ref) {
                found.append((String(cString: git_reference_name(ref)), ObjectID(target.pointee)))
            }
        }
        referencesListed += found.count
        return found
    }
}
