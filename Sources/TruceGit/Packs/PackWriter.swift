internal import CGitShim
internal import CLibgit2
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Re-implements git's pack (version 2) and pack index (version 2), written (gitformat-pack): byte-compatible with git, listed in TruceGit/README.md.
///
/// Writes a pack holding exactly the objects it is given, and its index, without libgit2's pack builder or indexer.
///
/// libgit2 1.5's `git_packbuilder_write` lists every tag, and so reads every
/// reference in the store (a directory per document), and starts delta-search
/// threads: on every save, for three to six small objects. Its indexer then
/// maps and re-reads each entry it is handed (two writes and a map per
/// object: a fifth of a millisecond per version in a checkpoint of the save
/// log). A pack of whole objects needs neither: each is deflated as a
/// version 2 pack entry, and the index is written from what was written
/// (ids, offsets, CRCs). Both are fsynced under temporary names, renamed into
/// `objects/pack` (the index last) and the directory fsynced. Deltas are left
/// to `PackConsolidation`, which folds small packs later.
package struct PackWriter {
    /// What objects not held in memory are read from; nil for a writer of held objects only (`init(heldObjectsInto:)`).
    private let repository: Repository?
    /// Where the pack goes: the repository's own `objects/pack/` unless told otherwise.
    private let packDirectory: String

    /// A writer of packs of what `repository` reads, into `packDirectory` (with a trailing slash) or the repository's own.
    package init(repository: Repository, into packDirectory: String? = nil) {
        self.repository = repository
        self.packDirectory = packDirectory ?? repository.gitDirectory + "objects/pack/"
    }

    /// A writer of packs of objects `write` is handed in memory, into `packDirectory` (with a trailing slash): no
    /// repository handle, so it may run on any thread (`BackgroundPackWriter`).
    init(heldObjectsInto packDirectory: String) {
        (repository, self.packDirectory) = (nil, packDirectory)
    }

    /// Packs `ids` (each once, in the order first given) as the repository's object database reads them, or as
    /// `known` holds them; returns the pack's name (`pack-<hash>`), nil when `ids` is empty. `progress` hears the
    /// objects and the pack's bytes written so far. With `distinct`, the caller promises each id comes once (a set of
    /// millions would otherwise be built to check).
    ///
    /// An object `entries` finds is copied as it is deflated there: it is neither read through libgit2 nor deflated
    /// again (`PackEntries` proves it first), and the pages of `entries` read are let go as the copy goes on, so that
    /// they do not count as this process's memory.
    ///
    /// Objects are deflated at `compression`'s level. Once `cancellation` is set, the write stops within
    /// the next 4,096 objects, failing with `GIT_EUSER`, and leaves no file behind.
    @discardableResult
    package func write(
        _ ids: [ObjectID], known: [ObjectID: RawObject] = [:], copyingFrom entries: PackEntries? = nil, compression: PackCompression = .standard,
        distinct: Bool = false, cancellation: Cancellation? = nil, progress: ((_ done: Int, _ total: Int, _ bytes: Int) -> Void)? = nil
    ) throws(GitError) -> String? {
        var seen = Set<ObjectID>()
        var objects = distinct ? ids : ids.filter { seen.insert($0).inserted }
        guard !objects.isEmpty else { return nil }
        // What `entries` holds is copied in pack order, the rest after it: in the order asked, a push read its packs at
        // random, and most of its time went to faulting their pages in again once they had been let go.
        var places: [PackEntries.Place?] = []
        if let entries {
            let found = entries.places(of: objects)
            let order = PackEntries.Place.packOrder(of: found)
            objects = order.map { objects[$0] }
            places = order.map { found[$0] }
        }
        // Opened at the first object not held in memory: a writer of held objects only never touches the repository.
        var odb: OpaquePointer?
        defer { git_odb_free(odb) }
        func objectDatabase() throws(GitError) -> (Repository, OpaquePointer?) {
            guard let repository else {
                throw GitError(
                    operation: "write pack", code: GIT_ENOTFOUND.rawValue, errorClass: 0, message: "an object to pack is not held in memory")
            }
            if odb == nil { try check(git_repository_odb(&odb, repository.handle), "open object database") }
            return (repository, odb)
        }
        var pack = try PackFileWriter(in: packDirectory)
        defer { pack.removeTemporary() }
        let deflater = try Deflater(level: compression.level)
        // Stored objects cost a copy, and a save's few objects less than starting workers: neither is worth a second
        // thread. Nor are objects copied from `entries`.
        let parallel = compression != .stored && entries == nil && objects.count >= 1024 ? try ParallelDeflation(level: compression.level) : nil
        // "PACK", version 2, the object count: each big-endian.
        try pack.append(Array("PACK".utf8) + Self.bigEndian(2) + Self.bigEndian(UInt32(objects.count)))
        var written: [PackIndex.Entry] = []
        written.reserveCapacity(objects.count)
        var start = 0
        while start < objects.count {
            if cancellation?.isCancelled == true {
                throw GitError(operation: "write pack", code: GIT_EUSER.rawValue, errorClass: 0, message: "cancelled")
            }
            progress?(start, objects.count, Int(pack.written))
            let held = Self.run(of: objects, from: start, known: known)
            let run = objects[start..<start + held.count]
            start = run.endIndex
            let deflated = parallel.map { $0.workers > 1 ? $0.deflate(held, ids: run) : [] } ?? []
            for (offset, id) in run.enumerated() {
                func add(type: git_object_t, _ data: UnsafeRawBufferPointer) throws(GitError) {
                    let body = try deflater.deflate(data, id: id)
                    try body.withUnsafeBytes { body in Result { () throws(GitError) in try addDeflated(type: type, size: data.count, body) } }.get()
                }
                func addDeflated(type: git_object_t, size: Int, _ body: UnsafeRawBufferPointer) throws(GitError) {
                    let header = Self.entryHeader(type: type, size: size)
                    written.append(PackIndex.Entry(id: id, crc: PackIndex.crc32(body, continuing: PackIndex.crc32(header)), offset: pack.written))
                    try pack.append(header)
                    try pack.append(body)
                }
                // An entry that does not prove where the index put it may prove in another pack.
                if let entries, let entry = places[run.startIndex + offset].flatMap({ entries.entry(at: $0, of: id) ?? entries.entry(of: id) }) {
                    try addDeflated(type: entry.type, size: entry.size, entry.stream)
                    entries.noteRead()
                    continue
                }
                if let raw = held[offset] {
                    if offset < deflated.count, let body = deflated[offset] {
                        try body.withUnsafeBytes { body in
                            Result { () throws(GitError) in try addDeflated(type: git_object_t(Int32(raw.type)), size: raw.bytes.count, body) }
                        }.get()
                        continue
                    }
                    try raw.bytes.withUnsafeBytes { bytes in Result { () throws(GitError) in try add(type: git_object_t(Int32(raw.type)), bytes) } }
                        .get()
                    continue
                }
                // Past libgit2's object cache: through it, each commit read to be packed stayed there after (a first
                // push of a million documents packs its manifest's 15,876 commits of 3 KB each twice, 17 MB kept).
                let (repository, odb) = try objectDatabase()
                if let found = try repository.readPastCache(id, in: odb) {
                    try found.bytes.withUnsafeBytes { bytes in Result { () throws(GitError) in try add(type: git_object_t(found.type), bytes) } }
                        .get()
                    continue
                }
                var oid = id.raw
                var object: OpaquePointer?
                try check(git_odb_read(&object, odb, &oid), "read object \(id) to pack")
                defer { git_odb_object_free(object) }
                try add(
                    type: git_odb_object_type(object), UnsafeRawBufferPointer(start: git_odb_object_data(object), count: git_odb_object_size(object)))
            }
        }
        let checksum = try pack.finish()
        progress?(objects.count, objects.count, Int(pack.written))
        let name = "pack-" + ObjectID(bytes: checksum[...]).hex
        // Only the entries are needed now.
        (objects, places) = ([], [])
        try pack.install(as: name) { write throws(GitError) in try PackIndex.write(&written, packChecksum: checksum, to: write) }
        return name
    }

    /// An entry's header: the type in bits 4–6 of the first byte, the size in its low 4 bits and then 7 bits a byte,
    /// least significant first, the top bit of each byte saying another follows.
    static func entryHeader(type: git_object_t, size: Int) -> [UInt8] {
        var rest = UInt64(size) >> 4
        var header = [UInt8(truncatingIfNeeded: type.rawValue) << 4 | UInt8(size & 0x0F)]
        while rest > 0 {
            header[header.count - 1] |= 0x80
            header.append(UInt8(rest & 0x7F))
            rest >>= 7
        }
        return header
    }

    /// The run of objects from `start`, as `known` holds each (nil for one it does not): at most 4,096 objects
    /// (cancellation and progress are looked at between runs), and at most 16 MiB of those held in memory, which are
    /// deflated side by side before the run is written. Each is looked up here once, for the run's length, its
    /// deflation and its writing.
    private static func run(of objects: [ObjectID], from start: Int, known: [ObjectID: RawObject]) -> [RawObject?] {
        var held: [RawObject?] = []
        var bytes = 0
        while start + held.count < objects.count, held.count < 4096, bytes < 1 << 24 {
            let raw = known.isEmpty ? nil : known[objects[start + held.count]]
            bytes += raw?.bytes.count ?? 0
            held.append(raw)
        }
        return held
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * UInt32($0))) } }
}

/// A pack being written under a temporary name in `objects/pack`, hashed on the way for its trailer.
private struct PackFileWriter {
    let directory: String
    private let temporary: String
    private let descriptor: Int32
    /// Hashes and writes each full megabyte on another thread while the next one fills.
    private let flusher = PackFileFlusher()
    private var buffer: [UInt8] = []
    private var installed = false
    /// The bytes appended so far: the next entry's offset.
    private(set) var written: UInt64 = 0

    init(in directory: String) throws(GitError) {
        self.directory = directory
        // Not "pack-…": a killed write leaves a file prune knows for a temporary one.
        temporary = directory + "tmp_pack_truce_\(getpid())_\(UInt64.random(in: 0...UInt64.max))"
        descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o444)
        guard descriptor >= 0 else { throw DurableFiles.failure("create \(temporary)") }
    }

    mutating func append(_ bytes: [UInt8]) throws(GitError) {
        try bytes.withUnsafeBytes { bytes in Result { () throws(GitError) in try append(bytes) } }.get()
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) throws(GitError) {
        written += UInt64(bytes.count)
        if bytes.count >= 1 << 20 {
            try flush()
            flusher.sha.update(bytes)
            try DurableFiles.writeAll(bytes, to: descriptor, path: temporary)
        } else {
            buffer += bytes
            if buffer.count >= 1 << 20 {
                try flusher.finished()
                flusher.start(buffer, to: descriptor, path: temporary)
                buffer = []
                buffer.reserveCapacity(1 << 20 + 1 << 16)
            }
        }
    }

    /// Appends the SHA-1 of everything so far, which ends a pack, writes it all and fsyncs it; returns the SHA-1.
    mutating func finish() throws(GitError) -> [UInt8] {
        try flush()
        let checksum = flusher.sha.finalize()
        try DurableFiles.writeAll(checksum, to: descriptor, path: temporary)
        guard fsync(descriptor) == 0 else { throw DurableFiles.failure("fsync \(temporary)") }
        return checksum
    }

    /// Writes the index, as `writeIndex` hands its bytes to the function it is given, and fsyncs it, then renames the
    /// pack into place and the index after it, and fsyncs the directory.
    ///
    /// The index last, as git does: a pack is used only once its index is
    /// there, and by then both files are whole on disk. A crash between the
    /// renames leaves a pack without an index, which no reader opens.
    mutating func install(
        as name: String, writingIndex writeIndex: (_ write: (UnsafeRawBufferPointer) throws(GitError) -> Void) throws(GitError) -> Void
    ) throws(GitError) {
        let indexTemporary = temporary + ".idx"
        let indexDescriptor = open(indexTemporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o444)
        guard indexDescriptor >= 0 else { throw DurableFiles.failure("create \(indexTemporary)") }
        defer { unlink(indexTemporary) }
        do {
            defer { close(indexDescriptor) }
            try writeIndex { bytes throws(GitError) in try DurableFiles.writeAll(bytes, to: indexDescriptor, path: indexTemporary) }
            guard fsync(indexDescriptor) == 0 else { throw DurableFiles.failure("fsync \(indexTemporary)") }
        }
        guard rename(temporary, directory + name + ".pack") == 0 else { throw DurableFiles.failure("rename \(temporary)") }
        installed = true
        guard rename(indexTemporary, directory + name + ".idx") == 0 else { throw DurableFiles.failure("rename \(indexTemporary)") }
        DurableFiles.syncDirectory(directory)
    }

    /// Closes the file once no write is under way, and removes it unless it was installed.
    func removeTemporary() {
        _ = try? flusher.finished()
        close(descriptor)
        if !installed { unlink(temporary) }
    }

    /// Hashes and writes what the buffer holds, here, once the megabyte before it is written.
    private mutating func flush() throws(GitError) {
        try flusher.finished()
        guard !buffer.isEmpty else { return }
        buffer.withUnsafeBytes { flusher.sha.update($0) }
        try DurableFiles.writeAll(buffer, to: descriptor, path: temporary)
        buffer.removeAll(keepingCapacity: true)
    }
}

/// Writing a version 2 pack index (`.idx`), as `git index-pack` writes it for a pack without deltas.
extension PackIndex {
    struct Entry {
        let id: ObjectID
        /// The CRC-32 of the entry's bytes in the pack, header included. Declared after the id, it sits in the four
        /// bytes the id leaves before the next eight-byte boundary: 32 bytes an entry, not 40 (a push's batch lists
        /// half a million).
        let crc: UInt32
        let offset: UInt64
    }

    /// Writes the index through `write`, a megabyte at a time: magic and version, the fan-out table, the sorted ids,
    /// their CRCs and offsets (those past 2 GiB in a table of 64-bit ones), the pack's checksum and the index's own.
    ///
    /// Sorts `entries` in place, and writes each id straight from its bytes: at a million objects, a sorted copy and
    /// an array per id were a fifth of a local push's memory, and the whole index made in memory before it was
    /// written 15 MB of a push's batch.
    static func write(
        _ entries: inout [Entry], packChecksum: [UInt8], to write: (UnsafeRawBufferPointer) throws(GitError) -> Void
    ) throws(GitError) {
        // Ids compare as their bytes do.
        entries.sort { $0.id < $1.id }
        var sha = SHA1()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(chunk + 64)
        func emit(atLeast size: Int = chunk) throws(GitError) {
            guard bytes.count >= size, !bytes.isEmpty else { return }
            try bytes.withUnsafeBytes { bytes in
                sha.update(bytes)
                return Result { () throws(GitError) in try write(bytes) }
            }.get()
            bytes.removeAll(keepingCapacity: true)
        }
        bytes += [0xFF, 0x74, 0x4F, 0x63] + bigEndian(UInt32(2))
        var fanOut = [UInt32](repeating: 0, count: 256)
        for entry in entries { fanOut[Int(entry.id.raw.id.0)] += 1 }
        var total: UInt32 = 0
        for count in fanOut {
            total += count
            append(total, to: &bytes)
        }
        for entry in entries {
            entry.id.append(to: &bytes)
            try emit()
        }
        for entry in entries {
            append(entry.crc, to: &bytes)
            try emit()
        }
        var large: [UInt64] = []
        for entry in entries {
            if entry.offset < 1 << 31 {
                append(UInt32(entry.offset), to: &bytes)
            } else {
                append(UInt32(1 << 31) | UInt32(large.count), to: &bytes)
                large.append(entry.offset)
            }
            try emit()
        }
        for offset in large {
            append(UInt32(offset >> 32), to: &bytes)
            append(UInt32(truncatingIfNeeded: offset), to: &bytes)
            try emit()
        }
        bytes += packChecksum
        try emit(atLeast: 0)
        let checksum = sha.finalize()
        try checksum.withUnsafeBytes { checksum in Result { () throws(GitError) in try write(checksum) } }.get()
    }

    /// The bytes an index is written by at a time.
    private static let chunk = 1 << 20

    static func crc32(_ bytes: [UInt8], continuing crc: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { crc32($0, continuing: crc) }
    }

    static func crc32(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        UInt32(truce_crc32(crc, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count))
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * UInt32($0))) } }

    private static func append(_ value: UInt32, to bytes: inout [UInt8]) {
        for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }
}
