import CLibgit2
import Foundation

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
        try checkLooseReferences(matching: glob, listed: Set(found.map(\.0)))
        return found
    }

    /// Throws for the first loose reference file under `glob` that libgit2 cannot read.
    ///
    /// libgit2's iterator silently skips a loose reference file it cannot
    /// parse, so a store with a damaged ref would look like one without it:
    /// readers would lose a version and prune would delete what only that
    /// ref protected. A file that reads now, or is gone, was a writer racing
    /// the listing, not damage.
    private func checkLooseReferences(matching glob: String, listed: Set<String>) throws(GitError) {
        let fixed = glob.prefix { !"*?[\\".contains($0) }
        let directory = fixed.lastIndex(of: "/").map { String(fixed[...$0]) } ?? ""
        guard let enumerator = FileManager.default.enumerator(atPath: gitDirectory + directory) else { return }
        while let relative = enumerator.nextObject() as? String {
            let name = directory + relative
            // Lock files, and locks a stale-lock recovery is taking aside, are not references.
            guard !listed.contains(name), !name.hasSuffix(".lock"), !name.contains(".lock.stale-"), fnmatch(glob, name, 0) == 0,
                  enumerator.fileAttributes?[.type] as? FileAttributeType == .typeRegular else { continue }
            var oid = git_oid()
            let code = git_reference_name_to_id(&oid, handle, name)
            if code == 0 || code == GIT_ENOTFOUND.rawValue { continue }
            throw GitError.last("damaged reference file (restore or remove it)", code: code)
        }
    }
}
