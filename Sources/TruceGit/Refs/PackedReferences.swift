internal import CLibgit2
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Re-implements git's packed-refs file, read (git-pack-refs, refs/packed-backend.c): byte-compatible with git, listed in TruceGit/README.md.
///
/// git's `packed-refs` file: many references in one sorted text file, which plain git and libgit2 read as refs.
///
/// libgit2 writes every reference as a loose file with a reflog beside it:
/// two files, two directories and four fsyncs per head, which made a
/// 10,000-document sync write 160 MB. Writers that publish many heads at once
/// add them to `packed-refs` instead, in one rewrite under git's own lock
/// (`packed-refs.lock`, created exclusively), fsynced and renamed into place.
///
/// Reading goes around libgit2 too: its glob iterator copies every packed
/// reference on each call, so one document's heads would cost the whole
/// store. The file is sorted by name (git and libgit2 write it so, and say so
/// in its header), and a binary search finds a prefix in O(log n) lines.
package struct PackedReferences {
    /// The file's bytes, mapped; empty when there is no file.
    private let file: MappedFile
    /// Where the first record starts, after the header line.
    private let body: Int
    /// Whether the header promises sorted records; without it, lookups scan every line.
    private let isSorted: Bool
    /// The file it was read from: inode, size and modification time, to tell when it changed.
    package let stamp: FileStamp?

    package static let header = "# pack-refs with: peeled fully-peeled sorted \n"

    /// How much of the file a long scan reads before it lets the pages read go (`MappedFile.releasePages`): a
    /// sync's every batch rewrites the file, and kept to the end of a scan, a million heads' 126 MB were resident.
    static let bytesBetweenReleases = 16 << 20

    /// Reads the `packed-refs` file of the git directory `gitDirectory` (with a trailing slash).
    package init(readingIn gitDirectory: String) throws(GitError) {
        let path = gitDirectory + "packed-refs"
        stamp = FileStamp(of: path)
        file = stamp == nil ? MappedFile() : try MappedFile(mapping: path)
        let bytes = file.bytes
        let opening = Array("# pack-refs with:".utf8)
        guard bytes.count >= opening.count, Array(bytes[0..<opening.count]) == opening else {
            (body, isSorted) = (0, false)
            return
        }
        let headerEnd = file.lineEnd(from: 0) + 1
        (body, isSorted) = (min(headerEnd, bytes.count), String(decoding: bytes[0..<min(headerEnd, bytes.count)], as: UTF8.self).contains(" sorted "))
    }

    /// The references whose names start with `prefix`, in name order; peeled lines (`^…`, only for tags) skipped.
    package func references(withPrefix prefix: String) throws(GitError) -> [(name: String, target: ObjectID)] {
        var probes = 0
        return try references(withPrefix: prefix, probes: &probes)
    }

    /// `references(withPrefix:)`, adding to `probes` the records it looked at: the work tests count.
    package func references(withPrefix prefix: String, probes: inout Int) throws(GitError) -> [(name: String, target: ObjectID)] {
        var found: [(name: String, target: ObjectID)] = []
        try forEachReference(withPrefix: prefix, probes: &probes) { name, target in found.append((String(decoding: name, as: UTF8.self), target)) }
        return found
    }

    /// Calls `body` with the name's bytes (valid during the call) and the target of each reference whose name starts
    /// with `prefix`, in the file's order, letting the pages behind go as it reads: for a caller that needs no name
    /// kept (a million heads' names took 144 MB as strings).
    package func forEachReference(
        withPrefix prefix: String, probes: inout Int, _ visit: (Slice<UnsafeBufferPointer<UInt8>>, ObjectID) -> Void
    ) throws(GitError) {
        let wanted = Array(prefix.utf8)
        let first = isSorted ? lowerBound(wanted, probes: &probes) : body
        var record = first, released = first
        while record < file.bytes.count {
            probes += 1
            let (name, target, next) = try self.record(at: record)
            if name.starts(with: wanted) {
                visit(name, target)
            } else if isSorted {
                break
            }
            record = next
            if record - released >= Self.bytesBetweenReleases {
                file.releasePages(released..<record)
                released = record
            }
        }
        file.releasePages(released..<record)
    }

    /// `references(withPrefix:probes:)` of each of `prefixes`, in their order, reading the file once from start to
    /// end: the prefixes are looked up in byte order, each search starting where the one before it ended, and the
    /// pages behind are let go as it goes.
    ///
    /// A binary search from the whole file for each prefix maps pages all
    /// over it (its probes', and their neighbours): the heads of a sync's
    /// batch of 131,072 documents, spread over a million heads' file, made all
    /// 126 MB of it resident at once.
    package func references(withEachPrefix prefixes: [String], probes: inout Int) throws(GitError) -> [[(name: String, target: ObjectID)]] {
        var found = [[(name: String, target: ObjectID)]](repeating: [], count: prefixes.count)
        guard isSorted, prefixes.count > 1 else {
            for (position, prefix) in prefixes.enumerated() { found[position] = try references(withPrefix: prefix, probes: &probes) }
            return found
        }
        var floor = body, released = body
        for position in prefixes.indices.sorted(by: { ByteOrder.precedes(prefixes[$0], prefixes[$1]) }) {
            let wanted = Array(prefixes[position].utf8)
            floor = lowerBound(wanted, galloping: floor, probes: &probes)
            var record = floor
            while record < file.bytes.count {
                probes += 1
                let (name, target, next) = try self.record(at: record)
                guard name.starts(with: wanted) else { break }
                found[position].append((String(decoding: name, as: UTF8.self), target))
                record = next
            }
            if floor - released >= Self.bytesBetweenReleases {
                file.releasePages(released..<floor)
                released = floor
            }
        }
        file.releasePages(released..<file.bytes.count)
        return found
    }

    /// Whether any reference's name starts with `prefix`: one binary search in a sorted file.
    package func containsReference(withPrefix prefix: String) throws(GitError) -> Bool {
        let wanted = Array(prefix.utf8)
        var probes = 0
        var record = isSorted ? lowerBound(wanted, probes: &probes) : body
        while record < file.bytes.count {
            let (name, _, next) = try self.record(at: record)
            if name.starts(with: wanted) { return true }
            if isSorted { return false }
            record = next
        }
        return false
    }

    /// Calls `body` with every record in file order: its name and its raw lines (with its peeled line, if any),
    /// as slices of the mapped file, valid during the call.
    package func forEachRecord(
        _ body: (_ name: Slice<UnsafeBufferPointer<UInt8>>, _ lines: Slice<UnsafeBufferPointer<UInt8>>) throws(GitError) -> Void
    ) throws(GitError) {
        var record = self.body, released = self.body
        while record < file.bytes.count {
            let (name, _, next) = try self.record(at: record)
            try body(name, file.bytes[record..<next])
            record = next
            if record - released >= Self.bytesBetweenReleases {
                file.releasePages(released..<record)
                released = record
            }
        }
        file.releasePages(released..<record)
    }

    /// Whether the header promises records in byte order of their names (or there are none), as every file git or
    /// Truce wrote does; `recordsAreSorted` checks the promise.
    package var promisesSortedRecords: Bool { isSorted || body >= file.bytes.count }

    /// Whether the records are in byte order of their names, as the header of every file git or Truce wrote says.
    package func recordsAreSorted() throws(GitError) -> Bool {
        // No file, or one without records, is sorted whatever its header says.
        guard promisesSortedRecords else { return false }
        var previous: Slice<UnsafeBufferPointer<UInt8>>?
        var sorted = true
        try forEachRecord { name, _ in
            if let previous, sorted, !ByteOrder.precedes(previous, name) { sorted = false }
            previous = name
        }
        return sorted
    }

    /// The offset of the first record whose name is not below `prefix`.
    private func lowerBound(_ prefix: [UInt8], probes: inout Int) -> Int {
        lowerBound(prefix, between: body, and: file.bytes.count, probes: &probes)
    }

    /// `lowerBound`, known to be at `floor` or after it: probes `floor` + 4 KiB, 8 KiB, 16 KiB… until one is not
    /// before `prefix`, then searches the last step. A lookup near the one before reads the pages near it alone.
    private func lowerBound(_ prefix: [UInt8], galloping floor: Int, probes: inout Int) -> Int {
        var (low, step) = (floor, 4096)
        while low < file.bytes.count {
            probes += 1
            let record = recordStart(containing: min(floor + step, file.bytes.count - 1), notBefore: low)
            let end = file.lineEnd(from: record)
            guard file.bytes[min(record + 41, end)..<end].lexicographicallyPrecedes(prefix) else {
                return lowerBound(prefix, between: low, and: record, probes: &probes)
            }
            low = nextRecord(after: record)
            step *= 2
        }
        return low
    }

    /// The first record at or after `low` and before `high` (both record starts) whose name is not before `prefix`.
    private func lowerBound(_ prefix: [UInt8], between low: Int, and high: Int, probes: inout Int) -> Int {
        var (low, high) = (low, high)
        while low < high {
            probes += 1
            let record = recordStart(containing: (low + high) / 2, notBefore: low)
            let end = file.lineEnd(from: record)
            let name = file.bytes[min(record + 41, end)..<end]
            if name.lexicographicallyPrecedes(prefix) {
                low = nextRecord(after: record)
            } else {
                high = record
            }
        }
        return low
    }

    /// The start of the record whose lines hold `offset`: back to the line's start, and past peeled lines.
    private func recordStart(containing offset: Int, notBefore floor: Int) -> Int {
        let bytes = file.bytes
        var start = offset
        while true {
            while start > floor, bytes[start - 1] != 0x0A { start -= 1 }
            guard start > floor, bytes[start] == UInt8(ascii: "^") else { return start }
            start -= 1
        }
    }

    private func nextRecord(after record: Int) -> Int {
        let bytes = file.bytes
        var next = min(file.lineEnd(from: record) + 1, bytes.count)
        while next < bytes.count, bytes[next] == UInt8(ascii: "^") { next = min(file.lineEnd(from: next) + 1, bytes.count) }
        return next
    }

    /// The name and target of the record at `offset`, and where the next one starts.
    private func record(at offset: Int) throws(GitError) -> (name: Slice<UnsafeBufferPointer<UInt8>>, target: ObjectID, next: Int) {
        let bytes = file.bytes
        let end = file.lineEnd(from: offset)
        guard end - offset > 41, bytes[offset + 40] == UInt8(ascii: " "), let target = ObjectID(hexBytes: bytes[offset..<(offset + 40)]) else {
            throw GitError(
                operation: "read packed-refs", code: -1, errorClass: 0,
                message: "damaged line at byte \(offset) (restore the file, or remove the line)")
        }
        return (bytes[(offset + 41)..<end], target, nextRecord(after: offset))
    }
}

/// A file mapped read-only for as long as the value lives: a rewrite renamed over it leaves this copy intact.
private final class MappedFile: @unchecked Sendable {
    package let bytes: UnsafeBufferPointer<UInt8>

    package init() { bytes = UnsafeBufferPointer(start: nil, count: 0) }

    package init(mapping path: String) throws(GitError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        var status = stat()
        guard descriptor >= 0, fstat(descriptor, &status) == 0 else {
            let reason = String(cString: strerror(errno))
            if descriptor >= 0 { close(descriptor) }
            throw GitError(operation: "read \(path)", code: -1, errorClass: 0, message: reason)
        }
        defer { close(descriptor) }
        guard status.st_size > 0 else {
            bytes = UnsafeBufferPointer(start: nil, count: 0)
            return
        }
        let count = Int(status.st_size)
        guard let address = mmap(nil, count, PROT_READ, MAP_PRIVATE, descriptor, 0), address != MAP_FAILED else {
            throw GitError(operation: "map \(path)", code: -1, errorClass: 0, message: String(cString: strerror(errno)))
        }
        bytes = UnsafeBufferPointer(start: address.assumingMemoryBound(to: UInt8.self), count: count)
    }

    deinit {
        if let base = bytes.baseAddress { munmap(UnsafeMutableRawPointer(mutating: base), bytes.count) }
    }

    /// Lets the kernel take back the pages wholly inside `range` once a long scan has copied its records out: they
    /// stay in the page cache and map in again when read, but no longer count as this process's memory while it
    /// goes on (a snapshot's listing of a million heads read 141 MB of them, kept mapped through the push after it).
    /// A short range keeps its pages: the next lookup reads them again.
    func releasePages(_ range: Range<Int>) {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        guard let base = bytes.baseAddress, range.count >= 256 * page else { return }
        let start = (range.lowerBound + page - 1) / page * page, end = range.upperBound / page * page
        guard start < end else { return }
        madvise(UnsafeMutableRawPointer(mutating: base + start), end - start, MADV_DONTNEED)
    }

    /// The offset of the newline that ends the line at `offset`, or the file's end.
    package func lineEnd(from offset: Int) -> Int {
        guard let base = bytes.baseAddress, offset < bytes.count else { return bytes.count }
        guard let found = memchr(base + offset, 0x0A, bytes.count - offset) else { return bytes.count }
        return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
    }
}

/// A file's identity and version as `stat` tells them: a rewrite renamed into place changes the inode.
package struct FileStamp: Equatable {
    package let device: UInt64, inode: UInt64, size: Int64, seconds: Int, nanoseconds: Int

    package init?(of path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        (device, inode, size) = (UInt64(status.st_dev), UInt64(status.st_ino), Int64(status.st_size))
        #if canImport(Darwin)
            (seconds, nanoseconds) = (status.st_mtimespec.tv_sec, status.st_mtimespec.tv_nsec)
        #else
            (seconds, nanoseconds) = (status.st_mtim.tv_sec, status.st_mtim.tv_nsec)
        #endif
    }
}
