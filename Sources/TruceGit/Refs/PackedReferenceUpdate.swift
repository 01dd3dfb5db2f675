import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension PackedReferences {
    /// Re-implements git's packed-refs file, rewritten under packed-refs.lock (git-pack-refs, refs/packed-backend.c): byte-compatible with git, listed in TruceGit/README.md.
    ///
    /// Adds `additions` to the `packed-refs` file and removes the `removals`, in one durable rewrite under git's lock.
    ///
    /// A name in both is added. The lock is git's (`packed-refs.lock`, created
    /// exclusively), so libgit2 and git wait for it as for each other; a held
    /// lock fails with `GIT_ELOCKED`, which `withLockRetries` waits out. The
    /// file is read again under the lock, so nothing another writer packed
    /// meanwhile is lost, and the new file is fsynced before it replaces the
    /// old: a crash leaves one or the other, whole. With `keepingExisting`, an
    /// addition whose name the file already has is left out (compare-and-swap
    /// from nothing, as for a reference that must not exist yet).
    ///
    /// An addition is written without a peeled line (`^…`), so it must not
    /// name an annotated tag: the header says that every record that peels
    /// has one (`fully-peeled`), and git would take the tag for one that does
    /// not. Every caller adds commits. The records kept keep their peeled lines.
    ///
    /// The old file is merged with the sorted changes as it is read, through
    /// a small buffer: a store of a million heads is never held in memory
    /// (an unsorted file, which only an old writer leaves, is sorted whole).
    package static func update(
        in gitDirectory: String, adding additions: [(name: String, target: ObjectID)], removing removals: Set<String>,
        keepingExisting: Bool = false
    ) throws(GitError) {
        guard !additions.isEmpty || !removals.isEmpty else { return }
        let path = gitDirectory + "packed-refs", lockPath = path + ".lock"
        let descriptor = try LooseReferenceFiles.lock(path, mode: 0o644)
        var committed = false
        defer {
            close(descriptor)
            if !committed { unlink(lockPath) }
        }
        let current = try PackedReferences(readingIn: gitDirectory)
        // git compares names as bytes (strcmp); the first of two additions of one name wins.
        let sorted = additions.enumerated().sorted {
            ByteOrder.precedes($0.element.name, $1.element.name)
                || (ByteOrder.equal($0.element.name, $1.element.name) && $0.offset < $1.offset)
        }.map(\.element)
        let added = sorted.indices.filter { $0 == 0 || !ByteOrder.equal(sorted[$0 - 1].name, sorted[$0].name) }.map { sorted[$0] }
        let removed = removals.sorted(by: ByteOrder.precedes)
        var output = BufferedOutput(descriptor: descriptor, path: lockPath)
        try output.append(Array(header.utf8))
        // The order is checked as the file is merged, not in a pass of its own before: a file out of order (only an
        // old writer leaves one) is then written again from the start, sorted whole.
        var merged = false
        if current.promisesSortedRecords {
            merged = try merge(current, adding: added, removing: removed, keepingExisting: keepingExisting, into: &output)
        }
        if !merged {
            try output.restart()
            try output.append(Array(header.utf8))
            try rewriteUnsorted(current, adding: added, removing: Set(removals), keepingExisting: keepingExisting, into: &output)
        }
        try output.flush()
        guard fsync(descriptor) == 0 else { throw DurableFiles.failure("fsync \(lockPath)") }
        guard rename(lockPath, path) == 0 else { throw DurableFiles.failure("rename \(lockPath)") }
        committed = true
        DurableFiles.syncDirectory(gitDirectory)
    }

    /// One pass over a sorted file and the sorted changes, as a merge sort's last step; false, with part of it
    /// written, when two records of the file turn out not to be in order.
    private static func merge(
        _ current: PackedReferences, adding added: [(name: String, target: ObjectID)], removing removed: [String], keepingExisting: Bool,
        into output: inout BufferedOutput
    ) throws(GitError) -> Bool {
        var nextAddition = 0, nextRemoval = 0
        var previous: Slice<UnsafeBufferPointer<UInt8>>?
        var inOrder = true
        try current.forEachRecord { name, lines throws(GitError) in
            guard inOrder else { return }
            if let previous, !ByteOrder.precedes(previous, name) {
                inOrder = false
                return
            }
            previous = name
            while nextAddition < added.count, ByteOrder.precedes(added[nextAddition].name, name) {
                try output.appendLine(added[nextAddition])
                nextAddition += 1
            }
            if nextAddition < added.count, ByteOrder.equal(added[nextAddition].name, name) {
                if keepingExisting { try output.append(lines) } else { try output.appendLine(added[nextAddition]) }
                nextAddition += 1
                return
            }
            while nextRemoval < removed.count, ByteOrder.precedes(removed[nextRemoval], name) { nextRemoval += 1 }
            if nextRemoval < removed.count, ByteOrder.equal(removed[nextRemoval], name) { return }
            try output.append(lines)
        }
        guard inOrder else { return false }
        for addition in added[nextAddition...] { try output.appendLine(addition) }
        return true
    }

    /// The whole file read, changed and sorted: for a file an older writer left unsorted.
    private static func rewriteUnsorted(
        _ current: PackedReferences, adding added: [(name: String, target: ObjectID)], removing removed: Set<String>, keepingExisting: Bool,
        into output: inout BufferedOutput
    ) throws(GitError) {
        var records: [(name: [UInt8], lines: [UInt8])] = []
        try current.forEachRecord { name, lines in records.append((Array(name), Array(lines))) }
        var additions = Dictionary(added.map { (Array($0.name.utf8), $0.target) }, uniquingKeysWith: { first, _ in first })
        if keepingExisting {
            for record in records where additions[record.name] != nil { additions[record.name] = nil }
        }
        let removedNames = Set(removed.map { Array($0.utf8) })
        records = records.filter { !removedNames.contains($0.name) && additions[$0.name] == nil }
        records += additions.map { name, target in (name, Array((target.hex + " ").utf8) + name + [0x0A]) }
        records.sort { $0.name.lexicographicallyPrecedes($1.name) }
        for record in records { try output.append(record.lines) }
    }
}

/// Bytes written to a file through a buffer, a mebibyte at a time.
private struct BufferedOutput {
    let descriptor: Int32
    let path: String
    private var buffer: [UInt8] = []
    private static let capacity = 1 << 20

    init(descriptor: Int32, path: String) {
        (self.descriptor, self.path) = (descriptor, path)
        buffer.reserveCapacity(Self.capacity)
    }

    mutating func append(_ bytes: some Collection<UInt8>) throws(GitError) {
        buffer.append(contentsOf: bytes)
        if buffer.count >= Self.capacity { try flush() }
    }

    /// A reference's line: its target's hex, a space, its name.
    mutating func appendLine(_ reference: (name: String, target: ObjectID)) throws(GitError) {
        buffer.append(contentsOf: reference.target.hex.utf8)
        buffer.append(0x20)
        buffer.append(contentsOf: reference.name.utf8)
        buffer.append(0x0A)
        if buffer.count >= Self.capacity { try flush() }
    }

    /// Forgets everything appended and empties the file, to write it again from its start.
    mutating func restart() throws(GitError) {
        buffer.removeAll(keepingCapacity: true)
        guard ftruncate(descriptor, 0) == 0, lseek(descriptor, 0, SEEK_SET) == 0 else { throw DurableFiles.failure("truncate \(path)") }
    }

    mutating func flush() throws(GitError) {
        try DurableFiles.writeAll(buffer, to: descriptor, path: path)
        buffer.removeAll(keepingCapacity: true)
    }
}
