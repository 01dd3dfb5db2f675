import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A durable append-only log of opaque records, each acknowledged after one data sync shared by concurrent callers.
///
/// The file is a header block (`headerSize` bytes) and then records. The
/// header holds two slots, each in a page of its own, with a magic, the
/// format version, a **generation** and the generation's first sequence
/// number, under a CRC-32C; the valid slot with the higher generation is the
/// current one, so a torn header write leaves the previous generation
/// current. A record is a 32-byte head (magic, payload length, generation,
/// sequence number, the previous record's checksum, the head's own
/// checksum), the payload, and a CRC-32C over all of it. Records are
/// self-delimiting: a reader scans from the first one and stops at the first
/// that is not whole and valid for the current generation, with the next
/// sequence number and the preceding record's checksum, so a torn tail,
/// zeros, garbage or an older generation's leftovers end the log, and so
/// does a stale record that happens to line up after a rewritten one.
///
/// Durability: when `append` returns, its records and everything before them
/// are on stable storage (`fdatasync` on Linux, `F_FULLFSYNC` on Darwin, and
/// the file's creation fsynced with its directory), so a power loss cannot
/// lose them. A torn write can only damage records whose `append` had not
/// returned: they were written after every acknowledged record and are
/// synced together, and a damaged record hides only itself and what follows.
/// A record whose `append` did not return (a crash, or an error) may be
/// missing afterwards or may be there; a caller must treat it as unknown.
///
/// Sequence numbers increase by one per record, and go on increasing across
/// `reset`, so one never names two records.
///
/// Concurrency: callers in one process share syncs (group commit); across
/// processes, every write and `reset` holds an exclusive `flock` on the file
/// (per open file description, so two `SaveLog`s on one file in one process
/// exclude each other too) and readers a shared one, so `records` only ever
/// returns records whose writer has synced them or died.
package final class SaveLog: @unchecked Sendable {
    /// The header block's size: two slots of one page each, so writing one cannot tear the other.
    package static let headerSize = 8192
    static let slotOffsets = [0, 4096]
    static let slotSize = 36
    static let headerMagic: [UInt8] = Array("TruceLog".utf8)
    static let formatVersion: UInt32 = 1
    /// A record's head (before the payload) and the checksum after it.
    package static let recordHeadSize = 32
    package static let recordOverhead = recordHeadSize + 4
    static let recordMagic: UInt32 = 0x5452_4543
    /// How much an append reads at the end it knows: in the common case one read that finds no valid record.
    static let appendScanChunk = 4096
    static let readScanChunk = 1 << 16

    package let path: String
    /// False for a log opened with `openForReading(at:)`: it follows the records and never writes.
    package let isWritable: Bool
    private let descriptor: Int32
    /// A read-only descriptor for `records(from:)`, which a save calls each time: kept open.
    private let follower: (descriptor: Int32, lock: NSLock)

    /// Guards `queue` and `leading`: the group commit's state.
    private let condition = NSCondition()
    private var queue: [Ticket] = []
    /// True while one caller writes and syncs (an append's leader, or `reset`); the others queue meanwhile.
    private var leading = false
    /// Where this process last knew the log ended; read and written only by the leader.
    private var tail = Tail(Header(generation: 0, firstSequence: 1))
    /// The error of a write that failed: later writes fail with it until `reset` or `drain` starts a new generation.
    private var failure: (any Error)?
    /// The file's size as last seen: records below it overwrite zeros or old records in place (see `extend`).
    private var allocated: Int64 = 0
    /// How much the file grows at a time.
    package static let growth: Int64 = 1 << 20

    /// One caller's payloads, waiting for the leader that writes them.
    package final class Ticket: @unchecked Sendable {
        let payloads: [[UInt8]]
        /// Set by the leader under `condition`.
        fileprivate var result: Result<[UInt64], any Error>?
        init(_ payloads: [[UInt8]]) { self.payloads = payloads }
    }

    struct Header: Equatable {
        var generation: UInt64
        var firstSequence: UInt64
    }

    /// The end of the valid records of one generation: the next record's offset, sequence and chain value.
    struct Tail {
        var generation: UInt64
        var offset: Int64
        var nextSequence: UInt64
        var previous: UInt32

        init(_ header: Header) {
            (generation, offset, nextSequence, previous) = (header.generation, Int64(SaveLog.headerSize), header.firstSequence, 0)
        }
    }

    /// Opens the log at `path`, creating it (durably, with its first generation) when missing; the directory must exist.
    package convenience init(path: String) throws {
        try Self.createIfMissing(path)
        try self.init(opening: path, writable: true)
    }

    /// Opens the log at `path` for reading only, nil when there is none: nothing is created, locked or written, so a
    /// log on a read-only mount, or in a directory its reader may not write, reads as well as any. Appends, drains
    /// and resets throw.
    package static func openForReading(at path: String) throws -> SaveLog? {
        do {
            return try SaveLog(opening: path, writable: false)
        } catch let error as SaveLogError where error.errorNumber == ENOENT {
            return nil
        }
    }

    private init(opening path: String, writable: Bool) throws {
        self.path = path
        isWritable = writable
        let descriptor = open(path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC)
        guard descriptor >= 0 else { throw SaveLogError.system("open \(path)") }
        self.descriptor = descriptor
        let follower = open(path, O_RDONLY | O_CLOEXEC)
        self.follower = (follower, NSLock())
        do {
            guard follower >= 0 else { throw SaveLogError.system("open \(path)") }
            _ = try Self.readHeader(descriptor, path: path)
        } catch {
            close(descriptor)
            if follower >= 0 { close(follower) }
            throw error
        }
    }

    deinit {
        close(descriptor)
        close(follower.descriptor)
    }

    // MARK: - Appending

    /// Appends one record per payload, in order, and returns their sequence numbers once all of them are durable.
    ///
    /// Concurrent callers share one sync: while one caller (the leader) writes
    /// and syncs, the others queue; the next leader writes every queued
    /// payload with one `pwrite` and syncs once for all. An I/O error is thrown
    /// to every caller whose records that write or sync covered.
    package func append(_ payloads: [[UInt8]]) throws -> [UInt64] {
        try wait(for: enqueue(payloads))
    }

    /// Queues `payloads` to be written after everything queued before, and returns at once; `wait(for:)` returns
    /// once they are durable.
    ///
    /// Records are written in the order they were queued: a caller that
    /// queues under a lock of its own orders its records by that lock, and
    /// waits for their sync after releasing it, so that its next holder's
    /// records can share the sync.
    package func enqueue(_ payloads: [[UInt8]]) throws -> Ticket {
        if let large = payloads.first(where: { $0.count > Int(UInt32.max) - Self.recordOverhead }) {
            throw SaveLogError(operation: "append to \(path)", message: "a record of \(large.count) bytes is too large")
        }
        let ticket = Ticket(payloads)
        if payloads.isEmpty {
            ticket.result = .success([])
            return ticket
        }
        condition.lock()
        queue.append(ticket)
        condition.unlock()
        return ticket
    }

    /// Waits until `ticket`'s records are durable and returns their sequence numbers, writing them (and whatever
    /// queued with them) when no other caller is.
    package func wait(for ticket: Ticket) throws -> [UInt64] {
        condition.lock()
        while ticket.result == nil && leading { condition.wait() }
        if let result = ticket.result {
            condition.unlock()
            return try result.get()
        }
        // No leader, and this caller's records still wait: it leads, for itself and whoever queued before it.
        leading = true
        let batch = queue
        queue = []
        condition.unlock()

        let results: [Result<[UInt64], any Error>]
        do {
            let sequences = try write(batch.flatMap(\.payloads))
            var start = 0
            results = batch.map { ticket in
                defer { start += ticket.payloads.count }
                return .success(Array(sequences[start..<start + ticket.payloads.count]))
            }
        } catch {
            results = batch.map { _ in .failure(error) }
        }
        condition.lock()
        for (waiting, result) in zip(batch, results) { waiting.result = result }
        leading = false
        // The callers just served return; one that queued meanwhile becomes the next leader.
        condition.broadcast()
        condition.unlock()
        return try ticket.result!.get()
    }

    /// Writes `payloads` as records at the log's end and syncs them, under the exclusive lock; only the leader calls it.
    private func write(_ payloads: [[UInt8]]) throws -> [UInt64] {
        try checkWritable()
        // Records queued after a lost one may name it (a save based on a save that failed): none is written until a reset.
        if let failure { throw failure }
        try lock(descriptor, LOCK_EX)
        defer { _ = flock(descriptor, LOCK_UN) }
        try findEnd()
        var buffer: [UInt8] = []
        buffer.reserveCapacity(payloads.reduce(0) { $0 + $1.count + Self.recordOverhead })
        var next = tail
        var sequences: [UInt64] = []
        for payload in payloads {
            next.previous = Self.encodeRecord(
                payload, generation: next.generation, sequence: next.nextSequence, previous: next.previous, into: &buffer)
            sequences.append(next.nextSequence)
            next.nextSequence += 1
        }
        next.offset += Int64(buffer.count)
        do {
            try extend(to: next.offset)
            try Self.writeAll(buffer, to: descriptor, at: tail.offset, path: path)
            try Self.sync(descriptor, path: path)
        } catch {
            // Best effort: hide the records from readers and later appenders, since their callers are told they failed.
            // If this write fails too the records' fate is unknown, as the thrown error says it is.
            let zeros = [UInt8](repeating: 0, count: Self.recordHeadSize)
            _ = zeros.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, off_t(tail.offset)) }
            failure = error
            throw error
        }
        tail = next
        return sequences
    }

    /// Grows the file with zeros, a `growth` at a time, until it holds `size` bytes; the caller holds the exclusive lock.
    ///
    /// Records then overwrite blocks the file has already: their sync writes
    /// data alone. An append that grew the file would sync its size too, a
    /// journal commit of the file system each time (about half again the cost).
    private func extend(to size: Int64) throws {
        if size <= allocated {
            return
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw SaveLogError.system("stat \(path)") }
        allocated = Int64(status.st_size)
        guard size > allocated else { return }
        let target = (size + Self.growth - 1) / Self.growth * Self.growth
        try Self.writeAll([UInt8](repeating: 0, count: Int(target - allocated)), to: descriptor, at: allocated, path: path)
        allocated = target
    }

    /// Brings `tail` to the log's current end, under the lock: past what other processes appended, or to a new generation.
    private func findEnd() throws {
        let header = try Self.readHeader(descriptor, path: path)
        if header.generation != tail.generation { tail = Tail(header) }
        try Self.scan(descriptor, path: path, from: &tail, chunk: Self.appendScanChunk) { _, _ in }
    }

    // MARK: - Reading and resetting

    /// Every valid record of the current generation whose sequence number is above `sequence` (all of them when nil).
    ///
    /// Reads through a descriptor of its own under a shared `flock`, so it
    /// waits for a writer's sync and never returns records that are not yet
    /// durable (other than those a dead writer left, which the next append syncs).
    package func records(after sequence: UInt64? = nil) throws -> [(sequence: UInt64, payload: [UInt8])] {
        let reader = open(path, O_RDONLY | O_CLOEXEC)
        guard reader >= 0 else { throw SaveLogError.system("open \(path)") }
        defer { close(reader) }
        try lock(reader, LOCK_SH)
        var position = Tail(try Self.readHeader(reader, path: path))
        var found: [(sequence: UInt64, payload: [UInt8])] = []
        try Self.scan(reader, path: path, from: &position, chunk: Self.readScanChunk) { number, payload in
            if number > sequence ?? 0 { found.append((number, Array(payload))) }
        }
        return found
    }

    /// Where a reader of the log stands: after which record of which generation (see `records(from:)`).
    package struct Cursor: Sendable {
        fileprivate var tail: Tail?
        /// A cursor before the first record of whatever generation is current.
        package init() {}
    }

    /// The valid records after `cursor`, which moves past them; `restarted` when the log started a new generation since.
    ///
    /// A reader that follows the log with one cursor reads each record once,
    /// whatever the log's length: the scan starts where the last one ended.
    package func records(from cursor: inout Cursor) throws -> (restarted: Bool, records: [(sequence: UInt64, payload: [UInt8])]) {
        follower.lock.lock()
        defer { follower.lock.unlock() }
        // No `flock`: a record or header slot caught mid-write fails its checksum and is read next time, and a
        // record is read only once whole, which is enough for a save to build on it (its writer's sync, or the
        // reader's own later one, covers the whole file).
        let reader = follower.descriptor
        let header = try Self.readHeader(reader, path: path)
        var restarted = false
        var position = cursor.tail ?? Tail(header)
        if position.generation != header.generation {
            (position, restarted) = (Tail(header), cursor.tail != nil)
        }
        var found: [(sequence: UInt64, payload: [UInt8])] = []
        try Self.scan(reader, path: path, from: &position, chunk: Self.appendScanChunk) { number, payload in
            found.append((number, Array(payload)))
        }
        cursor.tail = position
        return (restarted, found)
    }

    /// True when the current generation may hold records: a cheap check (two small reads, no lock) before `drain`.
    package func mayHaveRecords() throws -> Bool {
        var position = Tail(try Self.readHeader(descriptor, path: path))
        var found = false
        try Self.scan(descriptor, path: path, from: &position, chunk: Self.recordHeadSize) { _, _ in found = true }
        return found
    }

    /// Hands every record of the current generation to `apply` and then starts a new generation, all under the
    /// exclusive lock: no record is appended between the reading and the reset, so none is dropped unapplied.
    ///
    /// When `apply` throws, the log stays as it was. Nothing is reset when there were no records. Either way a failed
    /// write's refusal of appends ends: the caller has dropped what it queued after it.
    package func drain(_ apply: ([(sequence: UInt64, payload: [UInt8])]) throws -> Void) throws {
        try leadExclusively {
            var found: [(sequence: UInt64, payload: [UInt8])] = []
            try Self.scan(descriptor, path: path, from: &tail, chunk: Self.readScanChunk) { number, payload in
                found.append((number, Array(payload)))
            }
            guard !found.isEmpty else {
                // Nothing to land: a write that failed before left nothing after it, and appends may go on.
                failure = nil
                return
            }
            try apply(found)
            try startGeneration()
        }
    }

    /// Starts a new generation: every record so far becomes invisible and appends restart right after the header.
    ///
    /// The new generation's header slot is written and synced under the
    /// exclusive lock; later appends overwrite the old records in place, so
    /// the file keeps its blocks (it is never truncated) and their syncs cost
    /// no file-system metadata. Sequence numbers go on from the last record's.
    /// A crash before `reset` returns may leave the old generation current.
    package func reset() throws {
        try leadExclusively { try startGeneration() }
    }

    /// Runs `body` as the leader (no append of this process writes meanwhile) under the exclusive lock, with `tail` at
    /// the log's end.
    private func leadExclusively(_ body: () throws -> Void) throws {
        try checkWritable()
        condition.lock()
        while leading { condition.wait() }
        leading = true
        condition.unlock()
        defer {
            condition.lock()
            leading = false
            condition.broadcast()
            condition.unlock()
        }
        try lock(descriptor, LOCK_EX)
        defer { _ = flock(descriptor, LOCK_UN) }
        let header = try Self.readHeader(descriptor, path: path)
        // From the header, not from `tail`: the records of this generation are all read, whoever wrote them.
        tail = Tail(header)
        try body()
    }

    /// Writes and syncs the next generation's header slot; the caller leads and holds the exclusive lock.
    private func startGeneration() throws {
        try Self.scan(descriptor, path: path, from: &tail, chunk: Self.appendScanChunk) { _, _ in }
        let header = Header(generation: tail.generation + 1, firstSequence: tail.nextSequence)
        let slot = Self.slotOffsets[Int(header.generation % 2)]
        try Self.writeAll(Self.encodeSlot(header), to: descriptor, at: Int64(slot), path: path)
        try Self.sync(descriptor, path: path)
        tail = Tail(header)
        failure = nil
    }

    // MARK: - The file

    /// Throws for a log opened for reading only.
    private func checkWritable() throws {
        guard isWritable else { throw SaveLogError(operation: "write \(path)", message: "the log was opened for reading only") }
    }

    /// Takes `flock` `operation` on `descriptor`, waiting as long as it takes.
    private func lock(_ descriptor: Int32, _ operation: Int32) throws {
        while flock(descriptor, operation) != 0 {
            if errno != EINTR { throw SaveLogError.system("flock \(path)") }
        }
    }

    /// Creates the log with its first generation under a temporary name and links it into place, so a crash never
    /// leaves a log without a valid header, and two processes creating it at once end with one file.
    private static func createIfMissing(_ path: String) throws {
        if access(path, F_OK) == 0 { return }
        let temporary = "\(path).new-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let descriptor = open(temporary, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw SaveLogError.system("create \(temporary)") }
        defer { unlink(temporary) }
        do {
            defer { close(descriptor) }
            let first = Header(generation: 1, firstSequence: 1)
            // The header, then zeros for the first records to overwrite (see `extend`).
            var block = [UInt8](repeating: 0, count: Int(growth))
            block.replaceSubrange(slotOffsets[1]..<slotOffsets[1] + slotSize, with: encodeSlot(first))
            try writeAll(block, to: descriptor, at: 0, path: temporary)
            try sync(descriptor, path: temporary)
        }
        // link fails when another process created the log first: theirs is as good. A file system without hard
        // links gets a rename, which could replace a log created in the meantime: only there is creation racy.
        if link(temporary, path) != 0 && errno != EEXIST {
            guard errno == EPERM || errno == ENOTSUP || errno == EOPNOTSUPP, rename(temporary, path) == 0 else {
                throw SaveLogError.system("link \(path)")
            }
        }
        LogFiles.syncDirectory(URL(fileURLWithPath: path).deletingLastPathComponent().path)
    }

    /// Removes the files a creation of the log at `path` killed before it finished left beside it (`<path>.new-…`):
    /// a second name of the log itself (killed between its link and its unlink), or, once older than `age` seconds, a
    /// log that never got its name (a live creation holds one for the time of one write and one sync).
    package static func removeAbandonedCreations(of path: String, olderThan age: TimeInterval) {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        let prefix = URL(fileURLWithPath: path).lastPathComponent + ".new-"
        let log = LogFiles.status(path)?.number
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] where name.hasPrefix(prefix) {
            let file = directory + "/" + name
            guard let status = LogFiles.status(file), status.number == log || Date().timeIntervalSince(status.modified) > age else { continue }
            unlink(file)
        }
    }

    /// The current header: the valid slot with the higher generation.
    static func readHeader(_ descriptor: Int32, path: String) throws -> Header {
        let bytes = try read(descriptor, at: 0, count: slotOffsets[1] + slotSize, path: path)
        let slots = slotOffsets.compactMap { offset in
            offset + slotSize <= bytes.count ? decodeSlot(bytes[offset..<offset + slotSize]) : nil
        }
        guard let header = slots.max(by: { $0.generation < $1.generation }) else {
            throw SaveLogError(operation: "open \(path)", message: "not a save log, or its header is damaged")
        }
        return header
    }

    /// Advances `position` over the valid records from its offset on, handing each to `each`; stops at the first that is not.
    static func scan(
        _ descriptor: Int32, path: String, from position: inout Tail, chunk: Int, _ each: (UInt64, ArraySlice<UInt8>) -> Void
    ) throws {
        var window: [UInt8] = []
        var windowStart: Int64 = 0
        // The window's index of `count` bytes at `offset`, read when the window does not hold them; nil past the file's end.
        func cover(_ offset: Int64, _ count: Int) throws -> Int? {
            if offset >= windowStart && offset + Int64(count) <= windowStart + Int64(window.count) { return Int(offset - windowStart) }
            window = try read(descriptor, at: offset, count: max(count, chunk), path: path)
            windowStart = offset
            return window.count >= count ? 0 : nil
        }
        while let head = try cover(position.offset, recordHeadSize) {
            guard
                let length = decodeHead(
                    window[head..<head + recordHeadSize], generation: position.generation, sequence: position.nextSequence,
                    previous: position.previous)
            else { return }
            let total = recordOverhead + length
            guard let start = try cover(position.offset, total) else { return }
            let stored = window.loadLittleEndian(UInt32.self, at: start + total - 4)
            guard CRC32C.checksum(window[start..<start + total - 4]) == stored else { return }
            each(position.nextSequence, window[start + recordHeadSize..<start + total - 4])
            position.offset += Int64(total)
            position.nextSequence += 1
            position.previous = stored
        }
    }

    /// Up to `count` bytes at `offset`: fewer only at the file's end.
    static func read(_ descriptor: Int32, at offset: Int64, count: Int, path: String) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + done, count - done, off_t(offset) + off_t(done)) }
            if got < 0, errno == EINTR { continue }
            if got < 0 { throw SaveLogError.system("read \(path)") }
            if got == 0 { break }
            done += got
        }
        bytes.removeSubrange(done...)
        return bytes
    }

    /// Writes every byte of `bytes` at `offset`, through short writes and interrupted calls.
    static func writeAll(_ bytes: [UInt8], to descriptor: Int32, at offset: Int64, path: String) throws {
        var done = 0
        while done < bytes.count {
            let wrote = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done)) }
            if wrote < 0, errno == EINTR { continue }
            if wrote <= 0 { throw SaveLogError.system("write \(path)") }
            done += wrote
        }
    }

    /// Makes what was written to `descriptor` durable: its data and the size, not other metadata.
    static func sync(_ descriptor: Int32, path: String) throws {
        #if canImport(Darwin)
            // fsync on Darwin leaves the data in the drive's cache; F_FULLFSYNC flushes it, where the file system can.
            if fcntl(descriptor, F_FULLFSYNC) == 0 { return }
            if fsync(descriptor) != 0 { throw SaveLogError.system("fsync \(path)") }
        #else
            while fdatasync(descriptor) != 0 {
                if errno != EINTR { throw SaveLogError.system("fdatasync \(path)") }
            }
        #endif
    }

    // MARK: - Encoding

    static func encodeSlot(_ header: Header) -> [UInt8] {
        var bytes = headerMagic
        bytes.appendLittleEndian(formatVersion)
        bytes.appendLittleEndian(UInt32(0))
        bytes.appendLittleEndian(header.generation)
        bytes.appendLittleEndian(header.firstSequence)
        bytes.appendLittleEndian(CRC32C.checksum(bytes[...]))
        return bytes
    }

    static func decodeSlot(_ bytes: ArraySlice<UInt8>) -> Header? {
        let base = bytes.startIndex
        guard bytes.prefix(8).elementsEqual(headerMagic), bytes.loadLittleEndian(UInt32.self, at: base + 8) == formatVersion,
            CRC32C.checksum(bytes[base..<base + 32]) == bytes.loadLittleEndian(UInt32.self, at: base + 32)
        else { return nil }
        return Header(
            generation: bytes.loadLittleEndian(UInt64.self, at: base + 16), firstSequence: bytes.loadLittleEndian(UInt64.self, at: base + 24))
    }

    /// Appends one record to `buffer` and returns its checksum, the next record's `previous`.
    static func encodeRecord(_ payload: [UInt8], generation: UInt64, sequence: UInt64, previous: UInt32, into buffer: inout [UInt8]) -> UInt32 {
        let start = buffer.count
        buffer.appendLittleEndian(recordMagic)
        buffer.appendLittleEndian(UInt32(payload.count))
        buffer.appendLittleEndian(generation)
        buffer.appendLittleEndian(sequence)
        buffer.appendLittleEndian(previous)
        buffer.appendLittleEndian(CRC32C.checksum(buffer[start...]))
        buffer.append(contentsOf: payload)
        let checksum = CRC32C.checksum(buffer[start...])
        buffer.appendLittleEndian(checksum)
        return checksum
    }

    /// The payload length of a record head that is valid where it stands, else nil.
    ///
    /// The head's own checksum is checked before its length is trusted, so a
    /// torn head never makes a reader allocate or read a garbage length.
    static func decodeHead(_ head: ArraySlice<UInt8>, generation: UInt64, sequence: UInt64, previous: UInt32) -> Int? {
        let base = head.startIndex
        guard head.loadLittleEndian(UInt32.self, at: base) == recordMagic,
            CRC32C.checksum(head[base..<base + 28]) == head.loadLittleEndian(UInt32.self, at: base + 28),
            head.loadLittleEndian(UInt64.self, at: base + 8) == generation, head.loadLittleEndian(UInt64.self, at: base + 16) == sequence,
            head.loadLittleEndian(UInt32.self, at: base + 24) == previous
        else { return nil }
        return Int(head.loadLittleEndian(UInt32.self, at: base + 4))
    }
}

extension Array where Element == UInt8 {
    fileprivate mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }
}

extension RandomAccessCollection where Element == UInt8, Index == Int {
    /// The little-endian integer at `index` (an index of the collection, not an offset from its start).
    fileprivate func loadLittleEndian<T: FixedWidthInteger>(_: T.Type, at index: Int) -> T {
        var value: T = 0
        for byte in (0..<MemoryLayout<T>.size).reversed() { value = value << 8 | T(self[index + byte]) }
        return value
    }
}
