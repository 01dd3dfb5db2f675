internal import CGitShim
internal import CLibgit2
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Re-implements git's pack index (version 2) and pack entry headers, read (gitformat-pack): byte-compatible with git, listed in TruceGit/README.md.
///
/// A pack and its version 2 index, mapped read-only.
///
/// Every offset and count read from either file is checked against the
/// file's size before it is followed: the pack may come from another store,
/// and a bad index or header makes its objects unfound, never a read out of bounds.
final class MappedPack {
    private let index: UnsafeRawBufferPointer
    private let pack: UnsafeRawBufferPointer
    /// What maps `index` and `pack`, shared with every `MappedPack` made by `init(sharing:counting:)`.
    private let mapping: PackMapping
    /// The index's path: which pack this is.
    let indexPath: String
    /// How many objects the index lists.
    let count: Int
    /// Index entries compared so far by `offset(of:)` (tests count them).
    private(set) var probes = 0
    /// The 64 KB chunks of the pack read since the last release, a bit each, counted into `resident`.
    private var packChunks: [UInt64]
    private let resident: ResidentChunks
    /// Whether anything was read since the last release: only then are there pages to let go.
    private(set) var wasRead = false

    init?(index indexPath: String, pack packPath: String, counting resident: ResidentChunks = ResidentChunks()) {
        guard let index = Self.map(indexPath) else { return nil }
        guard let pack = Self.map(packPath) else {
            munmap(UnsafeMutableRawPointer(mutating: index.baseAddress), index.count)
            return nil
        }
        self.index = index
        self.pack = pack
        self.indexPath = indexPath
        // Magic "\377tOc", version 2, 256 cumulative counts, then per object its id, CRC and 32-bit offset, then the
        // 64-bit offsets, the pack's checksum and the index's own.
        let count = index.count >= 8 + 256 * 4 ? Int(Self.bigEndian32(index, at: 8 + 255 * 4)) : -1
        // "PACK", version 2 or 3, the object count; the pack ends with a 20-byte checksum.
        guard count >= 0, index.count >= 8 + 256 * 4 + count * 28 + 40,
            index.prefix(8).elementsEqual([0xFF, 0x74, 0x4F, 0x63, 0, 0, 0, 2]),
            pack.count >= 12 + 20, pack.prefix(4).elementsEqual(Array("PACK".utf8)),
            [2, 3].contains(Self.bigEndian32(pack, at: 4))
        else {
            munmap(UnsafeMutableRawPointer(mutating: index.baseAddress), index.count)
            munmap(UnsafeMutableRawPointer(mutating: pack.baseAddress), pack.count)
            return nil
        }
        self.count = count
        self.resident = resident
        mapping = PackMapping(index: index, pack: pack)
        packChunks = [UInt64](repeating: 0, count: pack.count >> 22 + 1)
    }

    /// The same files through the same mappings, read on another thread: only the mappings are shared (read-only
    /// memory), and the pages two readers read count once as the process's memory. Counts start anew, into `resident`.
    init(sharing other: MappedPack, counting resident: ResidentChunks) {
        (index, pack, mapping, indexPath, count) = (other.index, other.pack, other.mapping, other.indexPath, other.count)
        self.resident = resident
        packChunks = [UInt64](repeating: 0, count: pack.count >> 22 + 1)
    }

    /// Drops the pack's resident pages and the index's; read-only file pages, so the next read brings them back
    /// unchanged.
    ///
    /// Of the pack, only the 64 KB chunks read here go, in runs: another thread reading the same mapping
    /// (`init(sharing:counting:)`) keeps the pages it is reading.
    func releaseResidentPages() {
        releaseIndexPages()
        var chunk = 0
        let chunks = pack.count >> 16 + 1
        while chunk < chunks {
            guard packChunks[chunk >> 6] & (1 << UInt64(chunk & 63)) != 0 else {
                // A word of no chunk read is passed at once.
                chunk = packChunks[chunk >> 6] == 0 ? (chunk | 63) + 1 : chunk + 1
                continue
            }
            var end = chunk + 1
            while end < chunks, packChunks[end >> 6] & (1 << UInt64(end & 63)) != 0 { end += 1 }
            let start = chunk << 16, length = min(end << 16, pack.count) - start
            madvise(UnsafeMutableRawPointer(mutating: pack.baseAddress! + start), length, MADV_DONTNEED)
            chunk = end
        }
        for word in packChunks.indices { packChunks[word] = 0 }
        wasRead = false
    }

    /// Drops the index's resident pages alone: read-only file pages, which the next lookup brings back unchanged.
    func releaseIndexPages() { madvise(UnsafeMutableRawPointer(mutating: index.baseAddress), index.count, MADV_DONTNEED) }

    /// Counts the chunks of `bytes` from `start` (up to `end`) as read, each once until the next release.
    private static func note(_ chunks: inout [UInt64], from start: Int, to end: Int, into resident: ResidentChunks) {
        guard start < end else { return }
        for chunk in (start >> 16)...((end - 1) >> 16) {
            let bit = UInt64(1) << UInt64(chunk & 63)
            guard chunks[chunk >> 6] & bit == 0 else { continue }
            chunks[chunk >> 6] |= bit
            resident.bytes += 1 << 16
        }
    }

    /// A read of the index is not counted: a lookup reads a few bytes of it at random, and counting each such page made
    /// a large store's lookups release the packs (and fault them in again) every few hundred objects. The index's pages
    /// go with the pack's (`PackEntries.noteRead()`, and the end of each batch).
    private func noteIndexRead() { wasRead = true }

    private func notePackRead(at offset: Int, length: Int) {
        wasRead = true
        Self.note(&packChunks, from: offset, to: min(offset + length, pack.count), into: resident)
    }

    /// Where `id`'s entry starts in the pack, as the index says; nil when it lists no such id.
    func offset(of id: ObjectID) -> Int? { place(of: id)?.offset }

    /// Calls `body` with the leading 32 bits of each id the index lists, in its order.
    func forEachLeadingKey(_ body: (UInt32) -> Void) {
        let ids = 8 + 256 * 4
        for position in 0..<count { body(Self.bigEndian32(index, at: ids + position * 20)) }
        noteIndexRead()
    }

    /// Where the index lists `id` and where its entry starts in the pack; nil when it lists no such id.
    ///
    /// Ids are hashes, spread evenly: the first probes go where the id's leading bytes say it sits between the ends
    /// of the range left (two or three probes find it in an index of a million, where halving takes twenty, each on
    /// another page). Ids a hostile index bunches up cannot make it slow: after `interpolatedProbes`, it halves.
    func place(of id: ObjectID) -> (index: Int, offset: Int)? {
        var oid = id.raw
        let ids = 8 + 256 * 4
        let found: Int? = withUnsafeBytes(of: &oid.id) { wanted in
            let first = Int(wanted[0])
            noteIndexRead()
            var low = first == 0 ? 0 : Int(Self.bigEndian32(index, at: 8 + (first - 1) * 4))
            var high = Int(Self.bigEndian32(index, at: 8 + first * 4))
            guard low <= high, high <= count else { return nil }
            let key = Self.leadingWord(wanted)
            // The keys just outside the range: those of the entries that bound it, or the fan-out bucket's ends.
            var lowKey = UInt64(first) << 56, highKey = lowKey | (1 << 56 - 1)
            var placed = 0
            while low < high {
                var middle = (low + high) / 2
                if placed < Self.interpolatedProbes, highKey > lowKey, key >= lowKey, key <= highKey {
                    let fraction = Double(key - lowKey) / Double(highKey - lowKey)
                    middle = min(high - 1, low + Int(fraction * Double(high - low)))
                }
                placed += 1
                probes += 1
                let entry = UnsafeRawBufferPointer(start: index.baseAddress! + ids + middle * 20, count: 20)
                // The leading words decide nearly every probe: the whole ids are compared only when they are equal.
                let entryKey = Self.leadingWord(entry)
                let order = entryKey != key ? (entryKey < key ? -1 : 1) : memcmp(entry.baseAddress!, wanted.baseAddress!, 20)
                if order == 0 { return middle }
                if order < 0 {
                    low = middle + 1
                    lowKey = entryKey
                } else {
                    high = middle
                    highKey = entryKey
                }
            }
            return nil
        }
        guard let found, let offset = offset(atIndex: found) else { return nil }
        return (found, offset)
    }

    /// The pack offset the index gives its `position`th entry; nil when a large offset points outside its table.
    private func offset(atIndex position: Int) -> Int? {
        let offsets = 8 + 256 * 4 + count * 24
        noteIndexRead()
        let small = Self.bigEndian32(index, at: offsets + position * 4)
        guard small & 0x8000_0000 != 0 else { return Int(small) }
        let large = offsets + count * 4 + Int(small & 0x7FFF_FFFF) * 8
        guard large + 8 <= index.count - 40 else { return nil }
        let offset = UInt64(Self.bigEndian32(index, at: large)) << 32 | UInt64(Self.bigEndian32(index, at: large + 4))
        return offset < UInt64(Int.max) ? Int(offset) : nil
    }

    /// Every entry's offset in pack order, made the first time an entry's end is asked for. Made once for all the readers
    /// of the mapping (`PackMapping.reverseIndex`): two threads' each made its own, 33 MB at a million documents.
    private lazy var reverseIndex: PackReverseIndex = mapping.reverseIndex {
        PackReverseIndex(count: count, packSize: pack.count) { add in
            for position in 0..<count { if let offset = offset(atIndex: position) { add(offset) } }
        }
    }

    /// The whole object at `offset`, the `position`th of the index, when its bytes (header and stream) match the
    /// CRC-32 the index records for it; nil for a delta, or bytes that do not match.
    func entry(at offset: Int, checkingCRCOf position: Int) -> (type: git_object_t, size: Int, stream: UnsafeRawBufferPointer)? {
        guard let entry = entry(at: offset), let rest = entry.rest.baseAddress else { return nil }
        // Where the next entry starts, or the pack's checksum.
        let end = reverseIndex.offset(after: offset) ?? pack.count - 20
        let headerLength = UnsafeRawPointer(rest) - (pack.baseAddress! + offset)
        guard end > offset + headerLength, end <= pack.count - 20 else { return nil }
        let crcs = 8 + 256 * 4 + count * 20
        noteIndexRead()
        notePackRead(at: offset, length: end - offset)
        let bytes = UnsafeRawBufferPointer(rebasing: pack[offset..<end])
        guard
            UInt32(truce_crc32(0, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count))
                == Self.bigEndian32(index, at: crcs + position * 4)
        else { return nil }
        return (entry.type, entry.size, UnsafeRawBufferPointer(start: rest, count: end - offset - headerLength))
    }

    /// The entry at `offset`: its type and size from its header, and the pack's bytes from its data to the pack's
    /// checksum; nil for a delta or a header that is not whole.
    func entry(at offset: Int) -> (type: git_object_t, size: Int, rest: UnsafeRawBufferPointer)? {
        let end = pack.count - 20
        guard offset >= 12, offset < end else { return nil }
        var position = offset
        var byte = pack[position]
        let type = Int32(byte >> 4 & 7)
        var size = Int(byte & 0x0F)
        var shift = 4
        while byte & 0x80 != 0 {
            position += 1
            guard position < end, shift <= 56 else { return nil }
            byte = pack[position]
            size |= Int(byte & 0x7F) << shift
            shift += 7
        }
        position += 1
        // 1 to 4: commit, tree, blob, tag; 6 and 7 are deltas.
        guard (1...4).contains(type), size >= 0 else { return nil }
        // Its zlib stream is read next: at most its size and zlib's overhead (5 bytes a 16 KB block, and its header).
        let span = min(size, pack.count)
        notePackRead(at: offset, length: position - offset + span + span >> 12 + 64)
        return (git_object_t(type), size, UnsafeRawBufferPointer(rebasing: pack[position..<end]))
    }

    private static func map(_ path: String) -> UnsafeRawBufferPointer? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_size > 0 else { return nil }
        let length = Int(status.st_size)
        guard let address = mmap(nil, length, PROT_READ, MAP_PRIVATE, descriptor, 0), address != MAP_FAILED else { return nil }
        return UnsafeRawBufferPointer(start: address, count: length)
    }

    /// Probes of `offset(of:)` placed by interpolation before it halves the range.
    static let interpolatedProbes = 6

    /// An id's first eight bytes, big-endian: its place among ids.
    private static func leadingWord(_ id: UnsafeRawBufferPointer) -> UInt64 {
        UInt64(bigEndian: id.loadUnaligned(as: UInt64.self))
    }

    private static func bigEndian32(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt32 {
        precondition(offset >= 0 && offset + 4 <= bytes.count)
        return UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }
}

/// A pack and its index mapped read-only, unmapped once the last `MappedPack` reading them goes.
final class PackMapping {
    let index: UnsafeRawBufferPointer
    let pack: UnsafeRawBufferPointer
    /// The pack's entry offsets in pack order, once a reader made them (`MappedPack.reverseIndex`).
    private let offsets = Mutex<PackReverseIndex?>(nil)

    init(index: UnsafeRawBufferPointer, pack: UnsafeRawBufferPointer) { (self.index, self.pack) = (index, pack) }

    /// The pack's entry offsets in pack order, made by `make` the first time any reader of this mapping asks.
    func reverseIndex(_ make: () -> PackReverseIndex) -> PackReverseIndex {
        offsets.withLock { offsets in
            if let offsets { return offsets }
            let made = make()
            offsets = made
            return made
        }
    }

    deinit {
        munmap(UnsafeMutableRawPointer(mutating: index.baseAddress), index.count)
        munmap(UnsafeMutableRawPointer(mutating: pack.baseAddress), pack.count)
    }
}

/// The bytes of the 64 KB chunks that reads of a set of `MappedPack`s have touched since their pages were last let go:
/// an estimate of what those mappings count for as the process's memory.
final class ResidentChunks {
    var bytes = 0
}
