internal import CLibgit2
import Foundation

extension Repository {
    /// Deletes many references at once: their packed lines in one rewrite of `packed-refs`, then their loose files.
    ///
    /// Each loose file goes only if it still holds the target given; one that
    /// moved, or is locked by a live writer, stays (the error is not thrown:
    /// callers use this to tidy, and readers filter what stays).
    package func deleteReferences(_ references: [(name: String, target: ObjectID)]) throws(GitError) {
        let packed = try packedNames(among: references.map(\.name))
        try updatePackedReferences(adding: [], removing: packed)
        for reference in references where hasLooseReference(reference.name) {
            _ = try? deleteReference(reference.name, expecting: reference.target)
        }
    }

    /// `PackedReferences.update` of this repository's `packed-refs`, with the copy kept for lookups let go first: the
    /// rewrite reads the whole file, and two mappings of it at once (a million heads make it 130 MB) were the peak of a
    /// first sync's memory.
    package func updatePackedReferences(
        adding additions: [(name: String, target: ObjectID)], removing removals: Set<String>, keepingExisting: Bool = false
    ) throws(GitError) {
        packedReferencesCache = nil
        try PackedReferences.update(in: gitDirectory, adding: additions, removing: removals, keepingExisting: keepingExisting)
    }

    /// Every direct reference whose name matches `glob` (fnmatch; the part before the first wildcard is a directory prefix).
    package func references(matching glob: String) throws(GitError) -> [(name: String, target: ObjectID)] {
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
        instrumentation.countReferencesListed(found.count)
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
        for relative in DirectoryWalk.files(under: gitDirectory + directory) {
            let name = directory + relative
            // Lock files, and locks a stale-lock recovery is taking aside, are not references.
            guard !listed.contains(name), !name.hasSuffix(".lock"), !name.contains(".lock.stale-"), fnmatch(glob, name, 0) == 0 else { continue }
            var oid = git_oid()
            let code = git_reference_name_to_id(&oid, handle, name)
            if code == 0 || code == GIT_ENOTFOUND.rawValue { continue }
            throw GitError.last("damaged reference file (restore or remove it)", code: code)
        }
    }
}

extension Repository {
    /// Every reference whose name starts with `directory` (a ref path ending in `/`), loose and packed, as git reads them.
    ///
    /// libgit2's glob iterator parses and copies every packed reference on
    /// each call; this reads the loose files below the directory and the
    /// packed lines with its prefix only (a binary search of the sorted file),
    /// so one document's heads, the conflict markers or the replica manifests
    /// cost what they hold, not what the store holds. Loose files are read
    /// first and win over packed lines of the same name, and the packed file
    /// after: a writer packing references writes the file before it deletes
    /// the loose ones, so a reader in between sees them one way or the other.
    /// A loose file libgit2 cannot read throws, as in `references(matching:)`.
    ///
    /// A loose file listed and then gone before it is read means a writer
    /// replaced it (a save writes the new head, then deletes the one it
    /// replaces): the listing is taken again, so a reader never sees a
    /// document's old head vanish without its new one.
    package func references(under directory: String) throws(GitError) -> [(name: String, target: ObjectID)] {
        try listing(underEach: [directory], listingLooseUnder: directory).references[0]
    }

    /// The targets of `references(under:)`, read the same way, without their names: a packed reference's name is
    /// compared with the loose ones', never kept (a snapshot manifest of a million heads listed 144 MB of names it
    /// did not read).
    package func referenceTargets(under directory: String) throws(GitError) -> [ObjectID] {
        let loose = try listing(underEach: [directory], listingLooseUnder: directory, readingPacked: false)
        var targets = loose.references[0].map(\.target)
        var probes = 0
        try packedReferences().forEachReference(withPrefix: directory, probes: &probes) { name, target in
            // A loose file overrides its packed record (rare: most heads are packed).
            if !loose.looseNames.isEmpty, loose.looseNames.contains(String(decoding: name, as: UTF8.self)) { return }
            targets.append(target)
        }
        instrumentation.countPackedRecordsRead(probes)
        instrumentation.countReferencesListed(targets.count)
        return targets
    }

    /// The references under each of `directories` (each `root` or below it, ending in `/`), in their order, from one
    /// listing of the loose files under `root` and one reading of `packed-refs`.
    ///
    /// For the documents a sync adopts in one batch: a listing of each one's
    /// folder and a look at the file's stamp each cost more than the lookup.
    package func references(underEach directories: [String], listingLooseUnder root: String) throws(GitError)
        -> [[(name: String, target: ObjectID)]]
    {
        try listing(underEach: directories, listingLooseUnder: root).references
    }

    /// What one listing of references found: the references under each folder asked for, the names among them that
    /// are loose files, the lock files seen beside them, and the stamp of the `packed-refs` file read.
    package struct ReferenceListing {
        package var references: [[(name: String, target: ObjectID)]]
        package var looseNames: Set<String>
        /// The `*.lock` files under the root listed, by name relative to the git directory.
        package var lockFiles: [String]
        package var packedStamp: FileStamp?
    }

    /// `references(underEach:listingLooseUnder:)`, with what else the listing saw: a writer uses the loose names and
    /// the stamp to tell, after publishing, whether another writer published beside it, and takes over stale locks.
    package func listing(underEach directories: [String], listingLooseUnder root: String, readingPacked: Bool = true) throws(GitError)
        -> ReferenceListing
    {
        // Which folders asked for hold a loose file: made only once there is one (a store's heads are mostly packed,
        // and a batch asks for 131,072 folders).
        lazy var positions = Dictionary(grouping: directories.indices, by: { directories[$0] })
        var attempt = 0
        while true {
            attempt += 1
            var found = [[(name: String, target: ObjectID)]](repeating: [], count: directories.count)
            var looseNames = Set<String>()
            var lockFiles: [String] = []
            var vanished = false
            let listed = DirectoryWalk.files(under: gitDirectory + root)
            instrumentation.didListLooseReferences()
            for relative in listed {
                // Lock files, and locks a stale-lock recovery is taking aside, are not references.
                if relative.hasSuffix(".lock") { lockFiles.append(root + relative) }
                if relative.hasSuffix(".lock") || relative.contains(".lock.stale-") { continue }
                let name = root + relative
                // The folders asked for that hold it, at any depth (all of them when `root` is the one folder).
                let holders =
                    directories == [root]
                    ? [0] : name.utf8.indices.filter { name.utf8[$0] == UInt8(ascii: "/") }.flatMap { positions[String(name[...$0])] ?? [] }
                guard !holders.isEmpty else { continue }
                var oid = git_oid()
                let code = git_reference_name_to_id(&oid, handle, name)
                if code == GIT_ENOTFOUND.rawValue {  // a writer deleted it meanwhile
                    vanished = true
                    continue
                }
                if code < 0 { throw GitError.last("damaged reference file (restore or remove it)", code: code) }
                for position in holders { found[position].append((name, ObjectID(oid))) }
                looseNames.insert(name)
            }
            // Only a writer that keeps deleting refs here could make every listing change under it: then take the last.
            if vanished, attempt < 50 { continue }
            var probes = 0, count = 0
            guard readingPacked else { return ReferenceListing(references: found, looseNames: looseNames, lockFiles: lockFiles, packedStamp: nil) }
            let packed = try packedReferences()
            for (position, records) in try packed.references(withEachPrefix: directories, probes: &probes).enumerated() {
                found[position] += records.filter { !looseNames.contains($0.name) }
                count += found[position].count
            }
            instrumentation.countPackedRecordsRead(probes)
            instrumentation.countReferencesListed(count)
            return ReferenceListing(references: found, looseNames: looseNames, lockFiles: lockFiles, packedStamp: packed.stamp)
        }
    }

    /// The names of the loose reference files under `directory` (ending in `/`), lock files left out: no file is read.
    /// What a writer compares with its listing to see whether another writer published meanwhile.
    package func looseReferenceNames(under directory: String) -> Set<String> {
        Set(
            DirectoryWalk.files(under: gitDirectory + directory).filter { !$0.hasSuffix(".lock") && !$0.contains(".lock.stale-") }.map {
                directory + $0
            })
    }

    /// The stamp of the `packed-refs` file as it is now: a rewrite by any writer changes it.
    package var packedReferencesStamp: FileStamp? { FileStamp(of: gitDirectory + "packed-refs") }

    /// Re-implements git's packed-refs records and their peeled lines, read (git-pack-refs, refs/packed-backend.c): byte-compatible with git, listed in TruceGit/README.md.
    ///
    /// The target of every reference under `refs/`, and of each packed tag's peeled line: where prune marks from.
    ///
    /// `references(matching:)` keeps every name, and libgit2's listing a
    /// parsed copy of `packed-refs`, some 300 MB at a million heads, all held
    /// through marking. Here packed records give their targets in place. A
    /// name both loose and packed gives both targets: the packed one is stale,
    /// and only keeps what it names until the next prune. A loose file libgit2
    /// cannot read throws, as in `references(matching:)`.
    package func referenceTargets() throws(GitError) -> Set<ObjectID> {
        var targets = Set<ObjectID>()
        // Lock files, and locks a stale-lock recovery is taking aside, are not references.
        for relative in DirectoryWalk.files(under: gitDirectory + "refs/") where !relative.hasSuffix(".lock") && !relative.contains(".lock.stale-") {
            var oid = git_oid()
            let code = git_reference_name_to_id(&oid, handle, "refs/" + relative)
            // Gone since the listing: the writer that deleted it wrote its successor first, after the prune's listing
            // of object files, which keeps every object written after it.
            if code == GIT_ENOTFOUND.rawValue { continue }
            if code < 0 { throw GitError.last("damaged reference file (restore or remove it)", code: code) }
            targets.insert(ObjectID(oid))
        }
        try packedReferences().forEachRecord { _, lines throws(GitError) in
            var start = lines.startIndex
            while start + 40 <= lines.endIndex {
                guard let target = ObjectID(hexBytes: lines[start..<start + 40]) else {
                    throw GitError(operation: "read packed-refs", code: -1, errorClass: 0, message: "a record has no object id")
                }
                targets.insert(target)
                // A peeled tag's next line: "^<40 hex>".
                guard let next = lines[(start + 40)...].firstIndex(of: UInt8(ascii: "\n")), next + 2 < lines.endIndex,
                    lines[next + 1] == UInt8(ascii: "^")
                else { break }
                start = next + 2
            }
        }
        return targets
    }

    /// Whether any reference may live below `directory` (ending in `/`): false only when its folder is absent and no
    /// packed reference starts with it, as for the heads of a store that has none yet.
    package func mayHaveReferences(under directory: String) throws(GitError) -> Bool {
        var status = stat()
        if stat(gitDirectory + directory, &status) == 0 { return true }
        return try packedReferences().containsReference(withPrefix: directory)
    }

    /// The names among `names` that have a line in `packed-refs`.
    package func packedNames(among names: [String]) throws(GitError) -> Set<String> {
        let packed = try packedReferences()
        var found = Set<String>()
        for name in names where try packed.references(withPrefix: name).contains(where: { $0.name == name }) { found.insert(name) }
        return found
    }

    /// The `packed-refs` file, read again only when it changed since the last call.
    package func packedReferences() throws(GitError) -> PackedReferences {
        if let cached = packedReferencesCache, cached.stamp == FileStamp(of: gitDirectory + "packed-refs") { return cached }
        let packed = try PackedReferences(readingIn: gitDirectory)
        packedReferencesCache = packed
        return packed
    }
}
