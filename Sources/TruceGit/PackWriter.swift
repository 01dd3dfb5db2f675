internal import CGitShim
internal import CLibgit2

/// Writes a pack holding exactly the objects it is given, through libgit2's indexer, without its pack builder.
///
/// libgit2 1.5's `git_packbuilder_write` lists every tag, and so reads every
/// reference in the store (a directory per document), and starts delta-search
/// threads: on every save, for three to six small objects. A save's pack needs
/// neither: its objects are deflated whole, one after another, as version 2
/// pack entries, and the indexer checks the stream, writes `.pack` and `.idx`
/// into `objects/pack` and fsyncs both and the directory when fsync is on.
/// Deltas are left to `PackConsolidation`, which folds small packs later.
package struct PackWriter {
    private let repository: Repository

    package init(repository: Repository) { self.repository = repository }

    /// Packs `ids` (each once, in the order first given) as the repository's object database reads them; returns the
    /// pack's name (`pack-<hash>`), nil when `ids` is empty.
    @discardableResult
    package func write(_ ids: [ObjectID]) throws(GitError) -> String? {
        var seen = Set<ObjectID>()
        let objects = ids.filter { seen.insert($0).inserted }
        guard !objects.isEmpty else { return nil }
        var odb: OpaquePointer?
        try check(git_repository_odb(&odb, repository.handle), "open object database")
        defer { git_odb_free(odb) }
        var pack: UnsafeMutablePointer<git_odb_writepack>?
        try check(git_odb_write_pack(&pack, odb, nil, nil), "start pack")
        defer { pack?.pointee.free(pack) }
        var stream = PackStream(pack: pack!)
        // "PACK", version 2, the object count: each big-endian.
        try stream.append(Array("PACK".utf8) + Self.bigEndian(2) + Self.bigEndian(UInt32(objects.count)))
        for id in objects {
            var oid = id.raw
            var object: OpaquePointer?
            try check(git_odb_read(&object, odb, &oid), "read object \(id) to pack")
            defer { git_odb_object_free(object) }
            let size = git_odb_object_size(object)
            let data = UnsafeRawBufferPointer(start: git_odb_object_data(object), count: size)
            try stream.append(Self.entryHeader(type: git_odb_object_type(object), size: size))
            try stream.append(try Self.deflate(data, id: id))
        }
        let stats = try stream.finish()
        guard stats.indexed_objects == UInt32(objects.count) else {
            throw GitError(operation: "write pack", code: -1, errorClass: 0, message: "indexed \(stats.indexed_objects) of \(objects.count) objects")
        }
        return "pack-" + ObjectID(bytes: stream.trailer[...]).hex
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

    /// `data` as one zlib stream, deflated at zlib's default level as libgit2 deflates what it packs.
    private static func deflate(_ data: UnsafeRawBufferPointer, id: ObjectID) throws(GitError) -> [UInt8] {
        var status: Int32 = 0
        // Uninitialized: the bound is more than deflate writes, and pages never written are never resident (a 50 MB
        // document would otherwise cost 50 MB more at its peak than libgit2's pack builder did).
        let out = [UInt8](unsafeUninitializedCapacity: truce_deflate_bound(data.count)) { buffer, count in
            var length = buffer.count
            status = truce_deflate(buffer.baseAddress, &length, data.baseAddress?.assumingMemoryBound(to: UInt8.self), data.count)
            count = status == 0 ? length : 0
        }
        guard status == 0 else { throw GitError(operation: "compress object \(id)", code: -1, errorClass: 0, message: "zlib status \(status)") }
        return out
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * UInt32($0))) } }
}

/// The bytes of a pack as they go to the indexer, hashed on the way for the trailer that ends them.
private struct PackStream {
    let pack: UnsafeMutablePointer<git_odb_writepack>
    private var sha = SHA1()
    private(set) var trailer: [UInt8] = []
    private var stats = git_indexer_progress()

    init(pack: UnsafeMutablePointer<git_odb_writepack>) { self.pack = pack }

    mutating func append(_ bytes: [UInt8]) throws(GitError) {
        sha.update(bytes)
        try send(bytes)
    }

    /// Appends the SHA-1 of everything appended so far, which ends a pack, and has the indexer write it; returns
    /// the indexer's count, which it keeps across the appends and checks the commit against.
    mutating func finish() throws(GitError) -> git_indexer_progress {
        trailer = sha.finalize()
        try send(trailer)
        try check(pack.pointee.commit(pack, &stats), "write pack")
        return stats
    }

    private mutating func send(_ bytes: [UInt8]) throws(GitError) {
        let status = bytes.withUnsafeBytes { pack.pointee.append(pack, $0.baseAddress, $0.count, &stats) }
        try check(status, "write pack")
    }
}
