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
    ///
    /// A packed line is removed by Truce's own rewrite of `packed-refs`, which
    /// reads the file again under its lock: libgit2 1.5 rewrites it from what
    /// it read before taking the lock, and would drop lines another writer
    /// packed in between.
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
        var deletedPacked = false
        if try !packedNames(among: [name]).isEmpty {
            try PackedReferences.update(in: gitDirectory, adding: [], removing: [name])
            deletedPacked = true
        }
        guard FileManager.default.fileExists(atPath: gitDirectory + name) else { return deletedPacked }
        // libgit2 deletes only if the reference still holds the value looked up above.
        let code = git_reference_delete(ref)
        if code == GIT_ENOTFOUND.rawValue { return deletedPacked }
        try check(code, "delete reference \(name)")
        return true
    }

    /// Deletes many references at once: their packed lines in one rewrite of `packed-refs`, then their loose files.
    ///
    /// Each loose file goes only if it still holds the target given; one that
    /// moved, or is locked by a live writer, stays (the error is not thrown:
    /// callers use this to tidy, and readers filter what stays).
    func deleteReferences(_ references: [(name: String, target: ObjectID)]) throws(GitError) {
        let packed = try packedNames(among: references.map(\.name))
        try PackedReferences.update(in: gitDirectory, adding: [], removing: packed)
        for reference in references where FileManager.default.fileExists(atPath: gitDirectory + reference.name) {
            _ = try? deleteReference(reference.name, expecting: reference.target)
        }
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

extension Repository {
    /// The references directly in `directory` (a ref path ending in `/`), loose and packed, as git reads them.
    ///
    /// Loose files are read first and win over packed lines of the same name,
    /// and the packed file is read after: a writer packing references writes
    /// the file before it deletes the loose ones, so a reader in between sees
    /// them one way or the other. The cost is one directory and a binary
    /// search, whatever the number of references in the store.
    func references(inDirectory directory: String) throws(GitError) -> [(name: String, target: ObjectID)] {
        var found: [(name: String, target: ObjectID)] = []
        var names = Set<String>()
        for entry in Self.fileNames(in: gitDirectory + directory).sorted() where !entry.hasSuffix(".lock") && !entry.contains(".lock.stale-") {
            let name = directory + entry
            var oid = git_oid()
            let code = git_reference_name_to_id(&oid, handle, name)
            if code == GIT_ENOTFOUND.rawValue { continue }
            if code < 0 {
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: gitDirectory + name, isDirectory: &isDirectory), isDirectory.boolValue { continue }
                throw GitError.last("damaged reference file (restore or remove it)", code: code)
            }
            found.append((name, ObjectID(oid)))
            names.insert(name)
        }
        for reference in try packedReferences().references(withPrefix: directory) where !names.contains(reference.name) {
            // Only direct children: a deeper name is another directory's.
            guard !reference.name.dropFirst(directory.count).contains("/") else { continue }
            found.append(reference)
        }
        referencesListed += found.count
        return found
    }

    /// Every reference whose name starts with `directory` (a ref path ending in `/`), loose and packed, in any order.
    ///
    /// libgit2's glob iterator parses and copies every packed reference on
    /// each call; this reads the loose files below the directory and the
    /// packed lines with its prefix only, so listing the conflict markers or
    /// the replica manifests costs what they hold, not what the store holds.
    /// A loose file libgit2 cannot read throws, as in `references(matching:)`.
    func references(under directory: String) throws(GitError) -> [(name: String, target: ObjectID)] {
        var found: [(name: String, target: ObjectID)] = []
        var names = Set<String>()
        let enumerator = FileManager.default.enumerator(atPath: gitDirectory + directory)
        while let relative = enumerator?.nextObject() as? String {
            guard enumerator?.fileAttributes?[.type] as? FileAttributeType == .typeRegular,
                  !relative.hasSuffix(".lock"), !relative.contains(".lock.stale-") else { continue }
            let name = directory + relative
            var oid = git_oid()
            let code = git_reference_name_to_id(&oid, handle, name)
            if code == GIT_ENOTFOUND.rawValue { continue }
            if code < 0 { throw GitError.last("damaged reference file (restore or remove it)", code: code) }
            found.append((name, ObjectID(oid)))
            names.insert(name)
        }
        for reference in try packedReferences().references(withPrefix: directory) where !names.contains(reference.name) {
            found.append(reference)
        }
        referencesListed += found.count
        return found
    }

    /// The names in a directory, without `.` and `..`; none when it does not exist (most documents have no loose heads).
    private static func fileNames(in path: String) -> [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            // Read in place: a record is only as long as its name, so the 256-byte `d_name` must not be copied or written back.
            let start = UnsafeRawPointer(entry) + MemoryLayout<dirent>.offset(of: \dirent.d_name)!
            let name = String(cString: start.assumingMemoryBound(to: CChar.self))
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }

    /// The names among `names` that have a line in `packed-refs`.
    func packedNames(among names: [String]) throws(GitError) -> Set<String> {
        let packed = try packedReferences()
        var found = Set<String>()
        for name in names where try packed.references(withPrefix: name).contains(where: { $0.name == name }) { found.insert(name) }
        return found
    }

    /// The `packed-refs` file, read again only when it changed since the last call.
    func packedReferences() throws(GitError) -> PackedReferences {
        if let cached = packedReferencesCache, cached.stamp == FileStamp(of: gitDirectory + "packed-refs") { return cached }
        let packed = try PackedReferences(readingIn: gitDirectory)
        packedReferencesCache = packed
        return packed
    }
}
