import Foundation
internal import TruceGit

extension TextMerge {
    /// Merges three open files as ``merge(base:ours:theirs:options:)`` merges their bytes, handing the merged bytes to `write` piece by piece.
    ///
    /// The concatenation of what `write` receives is what `git merge-file -p` prints, and
    /// the returned count is its number of conflicts. Large regular files are merged region
    /// by region between anchors (lines found once in every file, amid identical lines), so
    /// memory stays a small multiple of a region rather than of the files; inputs without
    /// such anchors are read whole and merged as ``merge(base:ours:theirs:options:)`` does.
    /// The handles are read with `pread` (files) or to their end (anything else).
    /// Returns nil, having written nothing, when any input is binary. Throws as
    /// ``merge(base:ours:theirs:options:)`` does, and `TruceError.storeFailure` when a file cannot be read.
    public static func mergeFiles(
        base: FileHandle, ours: FileHandle, theirs: FileHandle, options: TextMergeOptions = .init(),
        write: (Data) -> Void
    ) throws(TruceError) -> Int? {
        try mergeFiles(base: base, ours: ours, theirs: theirs, options: options, splitting: .standard, write: write)
    }

    /// ``mergeFiles(base:ours:theirs:options:write:)`` with the sizes that decide splitting given: tests split small files.
    static func mergeFiles(
        base: FileHandle, ours: FileHandle, theirs: FileHandle, options: TextMergeOptions, splitting: RegionSplitting,
        write: (Data) -> Void
    ) throws(TruceError) -> Int? {
        guard options.markerSize <= maximumMarkerSize else {
            throw .invalidConfiguration("conflict marker size \(options.markerSize) is above \(maximumMarkerSize)")
        }
        let descriptors = [base.fileDescriptor, ours.fileDescriptor, theirs.fileDescriptor]
        if let cuts = try RegionPlan.cuts(descriptors, options: options, splitting: splitting) {
            var conflicts = 0
            for (start, end) in zip(cuts, cuts.dropFirst()) {
                let pieces = try (0..<3).map { file throws(TruceError) in try readRange(descriptors[file], from: start[file], to: end[file]) }
                guard let merged = try merge(base: pieces[0], ours: pieces[1], theirs: pieces[2], options: options) else {
                    // The plan saw no NUL byte anywhere and no file near xdiff's limit, so no region can be binary.
                    throw .storeFailure(.init(operation: "merge text", message: "a region of a text file came back binary"))
                }
                write(merged.content)
                conflicts += merged.conflictCount
            }
            return conflicts
        }
        let whole = try [base, ours, theirs].map { handle throws(TruceError) in try readWhole(handle) }
        guard let merged = try merge(base: whole[0], ours: whole[1], theirs: whole[2], options: options) else { return nil }
        write(merged.content)
        return merged.conflictCount
    }

    /// True for a regular file git will not merge as text (a NUL in its first 8000 bytes, or more than 1023 MiB), read with `pread`.
    ///
    /// False for anything but a regular file: ``mergeFiles(base:ours:theirs:options:write:)``
    /// reads those whole and returns nil when one is binary.
    public static func isBinary(file: FileHandle) throws(TruceError) -> Bool {
        var status = stat()
        guard fstat(file.fileDescriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return false }
        let size = Int(status.st_size)
        if size > MergeFile.maximumTextSize { return true }
        return MergeFile.isBinary(try readRange(file.fileDescriptor, from: 0, to: min(size, 8000)))
    }

    /// All of `handle` from where it is.
    private static func readWhole(_ handle: FileHandle) throws(TruceError) -> Data {
        do {
            return try handle.readToEnd() ?? Data()
        } catch {
            throw .storeFailure(.init(operation: "read file", message: error.localizedDescription))
        }
    }

    /// Bytes `start..<end` of the file open at `descriptor`.
    fileprivate static func readRange(_ descriptor: Int32, from start: Int, to end: Int) throws(TruceError) -> Data {
        var data = Data(count: end - start)
        let failure: Int32? = data.withUnsafeMutableBytes { buffer in
            var done = 0
            while done < buffer.count {
                let count = pread(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(start + done))
                if count < 0 && errno == EINTR { continue }
                if count < 0 { return errno }
                if count == 0 { return EIO }  // The file shrank since it was planned.
                done += count
            }
            return nil
        }
        if let failure { throw .storeFailure(.init(operation: "read file", message: String(cString: strerror(failure)))) }
        return data
    }
}

/// When a file merge is split into regions, and how large they are.
struct RegionSplitting: Sendable {
    /// Files (all three) smaller than this are merged whole.
    var minimumBytes: Int
    /// The base bytes a region spans at least, but for the last.
    var regionBytes: Int

    /// What the library uses: a few MB per region, files below 8 MB whole.
    static let standard = RegionSplitting(minimumBytes: 8 << 20, regionBytes: 4 << 20)
}

/// Where to cut three files so that merging the pieces gives the bytes of merging them whole.
///
/// xdiff's merge is local around a line S that both diffs align and that the merge
/// cannot look across:
/// - The lines found once in every file come in the same order in all three, and the
///   lines between them pass `Gaps`' checks, so every shortest alignment of the base with
///   each side matches all of them, whatever stretch of the files xdiff is given. (xdiff
///   returns a shortest alignment except where its cost heuristics cut in on a box with
///   hundreds of changes; the tests against git cover that case, the argument does not.)
/// - S is one of those lines: no change group can slide over it in xdl_change_compact
///   (sliding past a line needs an equal line at the group's other end), and its count of 1
///   is below xdl_cleanup_records' limit in any piece.
/// - The 4 lines before S and the 4 after are identical in all three files, and S holds a
///   letter or digit, so conflicts on either side are more than 3 lines apart with a letter
///   or digit between: neither XDL_MERGE_ZEALOUS nor its alnum folding joins them, and
///   changes on opposite sides of an unchanged line never conflict.
/// - A region starts with S and ends with 4 unchanged lines, so a conflict's marker CRLF
///   choice reads the same lines as in the whole file, except the pre-image's first line:
///   S ends in CRLF exactly when the base's first line does.
/// - Only the last region reaches the end of the files, where a missing final newline matters.
/// Inputs holding a NUL byte, near xdiff's size limit, merged with patience, or without
/// anchors are not split.
enum RegionPlan {
    /// Lines identical in all three files on each side of an anchor.
    static let neighbours = 4

    /// Byte offsets (base, ours, theirs) of every cut, from 0 to the files' ends; nil to merge whole.
    static func cuts(_ descriptors: [Int32], options: TextMergeOptions, splitting: RegionSplitting) throws(TruceError) -> [[Int]]? {
        var sizes: [Int] = []
        for descriptor in descriptors {
            var status = stat()
            guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG,
                lseek(descriptor, 0, SEEK_CUR) == 0
            else { return nil }
            sizes.append(Int(status.st_size))
        }
        guard options.diffAlgorithm != .patience, sizes.allSatisfy({ $0 >= splitting.minimumBytes && $0 < 1000 << 20 }) else { return nil }

        // Pass 1: how often each line occurs in each file (by hash: a collision only makes a line look less unique).
        var counts = LineCounts()
        var baseStartsWithCRLF = false
        for (file, descriptor) in descriptors.enumerated() {
            let reader = LineReader(descriptor, size: sizes[file])
            var first = true
            while let line = try reader.next() {
                counts.add(LineCounts.hash(line), file: file)
                if first && file == 0 { baseStartsWithCRLF = line.count > 1 && line[line.count - 2] == UInt8(ascii: "\r") }
                first = false
            }
            if reader.sawNUL { return nil }
        }

        // Pass 2: the lines unique in all three files, walked in step; they must agree in order and bytes.
        let readers = descriptors.enumerated().map { LineReader($1, size: sizes[$0]) }
        var gaps = Gaps()
        var cuts: [[Int]] = [[0, 0, 0]]
        var target = splitting.regionBytes
        while true {
            var lines: [UnsafeRawBufferPointer] = []
            for (file, reader) in readers.enumerated() {
                while let line = try reader.next() {
                    if counts.isUniqueInAll(LineCounts.hash(line)) {
                        lines.append(line)
                        break
                    }
                    guard gaps.add(line, file: file) else { return nil }
                }
            }
            guard gaps.close(counts) else { return nil }
            if lines.isEmpty { break }
            // One file ran out first, or the unique lines differ or come in another order: leave it to xdiff whole.
            guard lines.count == 3, lines[1].elementsEqual(lines[0]), lines[2].elementsEqual(lines[0]) else { return nil }
            let offsets = readers.map(\.lineStart)
            guard offsets[0] >= target, sizes[0] - offsets[0] >= splitting.regionBytes / 2 else { continue }
            guard lines[0].contains(where: isAlphanumeric), lines[0].last == UInt8(ascii: "\n") else { continue }
            guard (lines[0].count > 1 && lines[0][lines[0].count - 2] == UInt8(ascii: "\r")) == baseStartsWithCRLF else { continue }
            guard try neighboursMatch(descriptors, offsets, sizes) else { continue }
            cuts.append(offsets)
            target = offsets[0] + splitting.regionBytes
        }
        guard cuts.count > 1 else { return nil }
        cuts.append(sizes)
        return cuts
    }

    /// C's `isalnum` in the C locale, which xdiff's `lines_contain_alnum` uses.
    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }

    /// True when the `neighbours` lines before and after the lines at `offsets` are the same bytes in all three files.
    private static func neighboursMatch(_ descriptors: [Int32], _ offsets: [Int], _ sizes: [Int]) throws(TruceError) -> Bool {
        let window = 16 << 10
        var around: [(before: [ArraySlice<UInt8>], after: [ArraySlice<UInt8>])] = []
        for file in 0..<3 {
            let start = max(0, offsets[file] - window)
            let end = min(sizes[file], offsets[file] + window)
            let bytes = [UInt8](try TextMerge.readRange(descriptors[file], from: start, to: end))
            let split = offsets[file] - start
            let before = bytes[..<split].split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).dropLast()
            // Each piece of `before` is a line without its newline; the first may be cut by the window.
            guard before.count > neighbours else { return false }
            // `after`: S and the lines that follow it, each complete only when a newline ends it inside the window.
            let after = bytes[split...].split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            guard after.count > neighbours + 1 else { return false }
            around.append((Array(before.suffix(neighbours)), Array(after.prefix(neighbours + 1))))
        }
        return (1..<3).allSatisfy { around[$0].before.elementsEqual(around[0].before) && around[$0].after.elementsEqual(around[0].after) }
    }
}

/// The lines between consecutive unique lines (gaps), checked so that xdiff must align every unique line.
///
/// Between two unique lines a side's diff keeps the lines the base and the side share at
/// the gap's start and end; the rest (the gap's *middles*) is changed. When a gap's two
/// middles share no line, any other alignment of the gap as short only slides a change
/// over equal lines, which xdl_change_compact undoes the same way everywhere; when they
/// share one, the gap must have a single longest alignment. An alignment that
/// crosses unique lines instead (pairs a base line of one gap with an equal side line of
/// another, t unique lines away) loses those t lines and gains at most as many lines as
/// the base middles, and as the side middles, between the two gaps hold that the other
/// file has anywhere: when either count is below t for every such pair, it is strictly longer. So every shortest
/// alignment matches the unique lines, whatever stretch of the files xdiff is given.
struct Gaps {
    /// Larger gaps (a rewrite) are left to the whole-file merge.
    static let maximumLines = 4096
    /// Gaps looked back over for crossing pairs; a span longer than this with enough changes to matter is not split.
    static let lookBack = 64

    /// One side's view of a finished gap: its lines' hashes and its middles' sizes.
    private struct Gap {
        var base: Set<UInt64>
        var side: Set<UInt64>
        var baseMiddle: Int
        var sideMiddle: Int
    }

    private var lines: [[Data]] = [[], [], []]
    /// The last `lookBack` gaps for ours, then theirs.
    private var recent: [[Gap]] = [[], []]
    /// Per side: changed base lines minus gaps, and changed side lines minus gaps, so far; and their least values
    /// more than `lookBack` gaps back (a span from there is dangerous when both have not fallen since).
    private var baseExcess = [0, 0], sideExcess = [0, 0]
    private var history: [[(base: Int, side: Int)]] = [[(0, 0)], [(0, 0)]]
    private var oldestBase = [Int.max, Int.max], oldestSide = [Int.max, Int.max]

    /// Adds a line of `file`'s current gap; false when the gap is too large.
    mutating func add(_ line: UnsafeRawBufferPointer, file: Int) -> Bool {
        guard lines[file].count < Self.maximumLines else { return false }
        lines[file].append(Data(line))
        return true
    }

    /// Checks the gaps that just ended and starts new ones; false when xdiff might align them otherwise.
    mutating func close(_ counts: LineCounts) -> Bool {
        defer { lines = [[], [], []] }
        for side in 0..<2 {
            let base = lines[0], other = lines[side + 1]
            var prefix = 0
            while prefix < min(base.count, other.count) && base[prefix] == other[prefix] { prefix += 1 }
            var suffix = 0
            while suffix < min(base.count, other.count) - prefix && base[base.count - 1 - suffix] == other[other.count - 1 - suffix] {
                suffix += 1
            }
            let baseMiddle = base[prefix..<base.count - suffix], otherMiddle = other[prefix..<other.count - suffix]
            if !baseMiddle.isEmpty && !otherMiddle.isEmpty && !Set(baseMiddle).isDisjoint(with: otherMiddle)
                && !Self.hasOneLongestAlignment(base, other)
            {
                return false
            }
            // Only a changed line the other file holds somewhere can be matched by another alignment.
            let gap = Gap(
                base: Set(base.map { $0.withUnsafeBytes(LineCounts.hash) }), side: Set(other.map { $0.withUnsafeBytes(LineCounts.hash) }),
                baseMiddle: baseMiddle.count { counts.occurs($0.withUnsafeBytes(LineCounts.hash), in: side + 1) },
                sideMiddle: otherMiddle.count { counts.occurs($0.withUnsafeBytes(LineCounts.hash), in: 0) })
            guard admit(gap, side: side) else { return false }
        }
        return true
    }

    /// True when exactly one set of line pairs is a longest common subsequence of `a` and `b` (both at most 256 lines).
    ///
    /// A pair (i, j) of equal lines is on some longest one when the longest before it, 1,
    /// and the longest after it add up to the whole; there is one longest exactly when
    /// each position in it has one such pair.
    static func hasOneLongestAlignment(_ a: [Data], _ b: [Data]) -> Bool {
        let (n, m) = (a.count, b.count)
        guard n <= 256 && m <= 256 else { return false }
        var forward = [Int](repeating: 0, count: (n + 1) * (m + 1)), backward = forward
        func at(_ i: Int, _ j: Int) -> Int { i * (m + 1) + j }
        for i in 0..<n {
            for j in 0..<m {
                forward[at(i + 1, j + 1)] = a[i] == b[j] ? forward[at(i, j)] + 1 : max(forward[at(i, j + 1)], forward[at(i + 1, j)])
            }
        }
        for i in stride(from: n - 1, through: 0, by: -1) {
            for j in stride(from: m - 1, through: 0, by: -1) {
                backward[at(i, j)] = a[i] == b[j] ? backward[at(i + 1, j + 1)] + 1 : max(backward[at(i + 1, j)], backward[at(i, j + 1)])
            }
        }
        let longest = forward[at(n, m)]
        var pairsAtPosition = [Int](repeating: 0, count: longest + 1)
        for i in 0..<n {
            for j in 0..<m where a[i] == b[j] && forward[at(i, j)] + 1 + backward[at(i + 1, j + 1)] == longest {
                pairsAtPosition[forward[at(i, j)] + 1] += 1
            }
        }
        return pairsAtPosition.dropFirst().allSatisfy { $0 == 1 }
    }

    /// Looks for a crossing pair between `gap` and the recent gaps close enough to matter, then remembers it.
    private mutating func admit(_ gap: Gap, side: Int) -> Bool {
        var changedBase = gap.baseMiddle, changedSide = gap.sideMiddle
        for (distance, earlier) in recent[side].reversed().enumerated() {
            let span = distance + 1
            changedBase += earlier.baseMiddle
            changedSide += earlier.sideMiddle
            if min(changedBase, changedSide) >= span && (!earlier.base.isDisjoint(with: gap.side) || !earlier.side.isDisjoint(with: gap.base)) {
                return false
            }
        }
        recent[side].append(gap)
        if recent[side].count > Self.lookBack { recent[side].removeFirst() }
        // Longer spans: the changes since some gap more than `lookBack` back reach the span's length on both sides.
        baseExcess[side] += gap.baseMiddle - 1
        sideExcess[side] += gap.sideMiddle - 1
        history[side].append((baseExcess[side], sideExcess[side]))
        if history[side].count > Self.lookBack + 1 {
            let old = history[side].removeFirst()
            oldestBase[side] = min(oldestBase[side], old.base)
            oldestSide[side] = min(oldestSide[side], old.side)
        }
        return baseExcess[side] + 1 < oldestBase[side] || sideExcess[side] + 1 < oldestSide[side]
    }
}

/// A file read front to back in large windows, line by line (a line ends after '\n', as in xdiff).
final class LineReader {
    private let descriptor: Int32
    private let size: Int
    private var buffer: UnsafeMutableRawBufferPointer
    /// Valid bytes of `buffer`, the file offset of its first, and where the next line starts in it.
    private var filled = 0, bufferOffset = 0, cursor = 0
    /// The file offset of the line `next` returned last.
    private(set) var lineStart = 0
    /// True once a NUL byte was read.
    private(set) var sawNUL = false

    init(_ descriptor: Int32, size: Int) {
        self.descriptor = descriptor
        self.size = size
        buffer = .allocate(byteCount: 1 << 20, alignment: 8)
    }

    deinit { buffer.deallocate() }

    /// The next line, valid until the next call; nil at the end of the file.
    func next() throws(TruceError) -> UnsafeRawBufferPointer? {
        while true {
            let rest = UnsafeRawBufferPointer(rebasing: buffer[cursor..<filled])
            if let newline = rest.firstIndex(of: UInt8(ascii: "\n")) {
                return take(newline + 1)
            }
            if bufferOffset + filled >= size {
                return rest.isEmpty ? nil : take(rest.count)
            }
            try refill()
        }
    }

    private func take(_ count: Int) -> UnsafeRawBufferPointer {
        let line = UnsafeRawBufferPointer(rebasing: buffer[cursor..<cursor + count])
        lineStart = bufferOffset + cursor
        cursor += count
        return line
    }

    /// Moves the unread bytes to the front (growing the buffer for a line longer than it) and reads more.
    private func refill() throws(TruceError) {
        let kept = filled - cursor
        if kept == buffer.count {
            let larger = UnsafeMutableRawBufferPointer.allocate(byteCount: buffer.count * 2, alignment: 8)
            larger.copyMemory(from: UnsafeRawBufferPointer(buffer))
            buffer.deallocate()
            buffer = larger
        } else if cursor > 0 {
            buffer.baseAddress!.copyMemory(from: buffer.baseAddress! + cursor, byteCount: kept)
        }
        bufferOffset += cursor
        filled = kept
        cursor = 0
        var count = -1
        repeat {
            count = pread(descriptor, buffer.baseAddress! + filled, buffer.count - filled, off_t(bufferOffset + filled))
        } while count < 0 && errno == EINTR
        if count <= 0 {
            // The file shrank or failed while it was read: stop splitting rather than guess.
            throw .storeFailure(.init(operation: "read file", message: String(cString: strerror(count < 0 ? errno : EIO))))
        }
        if memchr(buffer.baseAddress! + filled, 0, count) != nil { sawNUL = true }
        filled += count
    }
}

/// Per line hash, whether it occurs zero, one or more times in each of three files: an open-addressing table.
struct LineCounts {
    private var keys: [UInt64]
    /// Two bits per file: 0, 1, or 2 for two or more.
    private var counts: [UInt8]
    private var used = 0

    init() {
        keys = Array(repeating: 0, count: 1 << 16)
        counts = Array(repeating: 0, count: 1 << 16)
    }

    /// A 64-bit hash of `line`'s bytes, never 0 (the empty slot).
    static func hash(_ line: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(line.count)
        var index = 0
        while index + 8 <= line.count {
            hash = (hash ^ line.loadUnaligned(fromByteOffset: index, as: UInt64.self)) &* 0xBF58_476D_1CE4_E5B9
            hash ^= hash >> 31
            index += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while index < line.count {
            tail |= UInt64(line[index]) << shift
            shift += 8
            index += 1
        }
        hash = (hash ^ tail) &* 0x94D0_49BB_1331_11EB
        hash ^= hash >> 29
        return hash == 0 ? 1 : hash
    }

    /// Counts one more line with `hash` in `file` (0, 1 or 2).
    mutating func add(_ hash: UInt64, file: Int) {
        if (used + 1) * 4 > keys.count * 3 { grow() }
        let slot = find(hash)
        if keys[slot] == 0 {
            keys[slot] = hash
            used += 1
        }
        let shift = UInt8(file * 2)
        let current = (counts[slot] >> shift) & 3
        if current < 2 { counts[slot] += 1 << shift }
    }

    /// False when no line with `hash` is in `file` (exact: a line that is there always counts).
    func occurs(_ hash: UInt64, in file: Int) -> Bool {
        let slot = find(hash)
        return keys[slot] == hash && (counts[slot] >> UInt8(file * 2)) & 3 != 0
    }

    /// True when the line occurs exactly once in each of the three files (as far as its hash tells).
    func isUniqueInAll(_ hash: UInt64) -> Bool {
        let slot = find(hash)
        return keys[slot] == hash && counts[slot] == 0b01_0101
    }

    private func find(_ hash: UInt64) -> Int {
        let mask = keys.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while keys[slot] != 0 && keys[slot] != hash { slot = (slot + 1) & mask }
        return slot
    }

    private mutating func grow() {
        let (oldKeys, oldCounts) = (keys, counts)
        keys = Array(repeating: 0, count: oldKeys.count * 2)
        counts = Array(repeating: 0, count: oldKeys.count * 2)
        for (key, count) in zip(oldKeys, oldCounts) where key != 0 {
            let slot = find(key)
            keys[slot] = key
            counts[slot] = count
        }
    }
}
