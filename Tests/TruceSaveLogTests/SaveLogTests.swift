import Foundation
import TestSupport
import Testing

@testable import TruceSaveLog

/// The save log: records round-trip, a damaged tail ends the log, reset hides old records, and concurrent or killed
/// writers lose no acknowledged record.
@Suite(.timeLimit(.minutes(20)), .serialized) struct SaveLogTests {
    static func payload(_ index: Int, length: Int = 40) -> [UInt8] {
        Array("payload \(index);".utf8) + (0..<length).map { UInt8(truncatingIfNeeded: $0 * 31 + index) }
    }

    static func size(_ path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
    }

    /// Writes `bytes` at `offset` in the file at `path`, cutting the file there first when `truncating`, as a torn write would leave it.
    static func write(_ bytes: [UInt8], to path: String, at offset: UInt64, truncating: Bool = false) throws {
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        defer { try? handle.close() }
        if truncating { try handle.truncate(atOffset: offset) }
        try handle.seek(toOffset: offset)
        try handle.write(contentsOf: Data(bytes))
    }

    /// The bytes of the file at `path` from `offset` on.
    static func bytes(of path: String, from offset: Int) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: path)).dropFirst(offset))
    }

    @Test func crc32cMatchesKnownVectors() {
        // RFC 3720 (iSCSI), appendix B.4, and the customary check value.
        #expect(CRC32C.checksum(Array("123456789".utf8)[...]) == 0xE306_9283)
        #expect(CRC32C.checksum([UInt8](repeating: 0, count: 32)[...]) == 0x8A91_36AA)
        #expect(CRC32C.checksum([UInt8](repeating: 0xFF, count: 32)[...]) == 0x62A8_AB43)
        #expect(CRC32C.checksum((0..<32).map { UInt8($0) }[...]) == 0x46DD_794E)
        #expect(CRC32C.checksum((0..<32).map { UInt8(31 - $0) }[...]) == 0x113F_DB5C)
        #expect(CRC32C.checksum([][...]) == 0)
        // Continuing over a split gives the whole's checksum, at every split point (the eight-byte steps and the tail).
        let text = (0..<100).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let whole = CRC32C.checksum(text[...])
        for split in 0...text.count {
            #expect(CRC32C.checksum(text[split...], continuing: CRC32C.checksum(text[..<split])) == whole)
        }
    }

    @Test func recordsRoundTripInOrderAndSurviveReopening() throws {
        let directory = TemporaryDirectory("truce-savelog")
        let path = directory.path + "/save.log"
        let log = try SaveLog(path: path)
        #expect(try log.records().isEmpty)
        let first = try log.append([Self.payload(0)])
        let more = try log.append([Self.payload(1), [], Self.payload(2, length: 70_000)])
        #expect(first == [1])
        #expect(more == [2, 3, 4])
        #expect(try log.append([]) == [])
        let expected = [Self.payload(0), Self.payload(1), [], Self.payload(2, length: 70_000)]
        let read = try log.records()
        #expect(read.map(\.sequence) == [1, 2, 3, 4])
        #expect(read.map(\.payload) == expected)
        #expect(try log.records(after: 2).map(\.sequence) == [3, 4])
        #expect(try log.records(after: 2).map(\.payload) == Array(expected[2...]))
        #expect(try log.records(after: 4).isEmpty)
        #expect(try log.records(after: 0).count == 4)
        // Records overwrite zeros the file was grown with, a whole step at a time; nothing but zeros follows them.
        let end = SaveLog.headerSize + expected.reduce(0) { $0 + $1.count + SaveLog.recordOverhead }
        #expect(try Self.size(path) % Int(SaveLog.growth) == 0 && Self.size(path) >= end)
        #expect(try Self.bytes(of: path, from: end).allSatisfy { $0 == 0 })

        let reopened = try SaveLog(path: path)
        #expect(try reopened.records().map(\.payload) == expected)
        #expect(try reopened.append([Self.payload(5)]) == [5])
        #expect(try log.records().map(\.sequence) == [1, 2, 3, 4, 5])
    }

    @Test func aFileThatIsNotASaveLogIsRefused() throws {
        let directory = TemporaryDirectory("truce-savelog")
        let path = directory.path + "/other"
        try Data(repeating: 7, count: 10_000).write(to: URL(fileURLWithPath: path))
        #expect(throws: SaveLogError.self) { try SaveLog(path: path) }
        #expect(throws: SaveLogError.self) { try SaveLog(path: directory.path + "/missing/save.log") }
    }

    /// A torn tail, whatever it holds, is not a record; the next append overwrites it and is read back.
    @Test func aTornTailIsIgnoredAndOverwritten() throws {
        let directory = TemporaryDirectory("truce-savelog")
        // The bytes a whole next record (sequence 3) would take, found by appending it to a copy of the log.
        let path = directory.path + "/save.log", copy = directory.path + "/copy.log"
        let log = try SaveLog(path: path)
        _ = try log.append([Self.payload(0), Self.payload(1)])
        let intact = SaveLog.headerSize + 2 * (Self.payload(0).count + SaveLog.recordOverhead)
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        _ = try SaveLog(path: copy).append([Self.payload(2, length: 500)])
        let recordSize = Self.payload(2, length: 500).count + SaveLog.recordOverhead
        let nextRecord = Array(try Self.bytes(of: copy, from: intact).prefix(recordSize))
        #expect(nextRecord.count == recordSize)
        #expect(try Self.bytes(of: copy, from: intact + recordSize).allSatisfy { $0 == 0 }, "the copy holds more than the record")
        var random = SeededRandom(seed: 7)
        let tails: [(String, [UInt8])] = [
            ("half a record", Array(nextRecord.prefix(nextRecord.count / 2))),
            ("only its head", Array(nextRecord.prefix(SaveLog.recordHeadSize))),
            ("the record with its last byte flipped", nextRecord.dropLast() + [nextRecord.last! ^ 1]),
            ("the record with a payload byte flipped", Array(nextRecord.enumerated().map { $0.offset == 100 ? $0.element ^ 0x40 : $0.element })),
            ("zeros", [UInt8](repeating: 0, count: 4096)),
            ("garbage", (0..<3000).map { _ in UInt8(random.int(0...255)) }),
        ]
        for (name, tail) in tails {
            try Self.write(tail, to: path, at: UInt64(intact), truncating: true)
            let fresh = try SaveLog(path: path)
            #expect(try fresh.records().map(\.payload) == [Self.payload(0), Self.payload(1)], "\(name) read as a record")
            let sizeBefore = try Self.size(path)
            #expect(try fresh.append([Self.payload(3)]) == [3], "after \(name)")
            #expect(try fresh.records().map(\.payload) == [Self.payload(0), Self.payload(1), Self.payload(3)], "after \(name)")
            #expect(try Self.size(path) >= max(sizeBefore, intact + Self.payload(3).count + SaveLog.recordOverhead))
            // The whole record, checked the same way, is a record: the tails above failed for what they lacked.
            try Self.write(nextRecord, to: path, at: UInt64(intact))
            #expect(try fresh.records().map(\.sequence) == [1, 2, 3])
            #expect(try fresh.records().last?.payload == Self.payload(2, length: 500))
        }
    }

    @Test func aFlippedByteEndsTheLogThere() throws {
        let directory = TemporaryDirectory("truce-savelog")
        let path = directory.path + "/save.log"
        let log = try SaveLog(path: path)
        _ = try log.append((0..<4).map { Self.payload($0) })
        let recordSize = Self.payload(0).count + SaveLog.recordOverhead
        let second = SaveLog.headerSize + recordSize
        // A byte of the second record's head, of its payload, of its checksum: each ends the log before it.
        for offset in [second + 5, second + SaveLog.recordHeadSize + 3, second + recordSize - 1] {
            let original = try Self.bytes(of: path, from: offset)[0]
            try Self.write([original ^ 0x10], to: path, at: UInt64(offset))
            #expect(try log.records().map(\.sequence) == [1], "a flipped byte at \(offset) did not end the log")
            try Self.write([original], to: path, at: UInt64(offset))
            #expect(try log.records().map(\.sequence) == [1, 2, 3, 4])
        }
        // A record rewritten in place breaks the chain: the old third record, still whole, is not read after it.
        try Self.write([0], to: path, at: UInt64(second))
        let fresh = try SaveLog(path: path)
        #expect(try fresh.append([Self.payload(9)]) == [2])
        #expect(try fresh.records().map(\.payload) == [Self.payload(0), Self.payload(9)])
    }

    @Test func resetHidesOldRecordsAndOverwritesInPlace() throws {
        let directory = TemporaryDirectory("truce-savelog")
        let path = directory.path + "/save.log"
        let log = try SaveLog(path: path)
        _ = try log.append((0..<10).map { Self.payload($0, length: 200) })
        let full = try Self.size(path)
        try log.reset()
        #expect(try Self.size(path) == full, "reset changed the file's size")
        #expect(try log.records().isEmpty)
        #expect(try SaveLog(path: path).records().isEmpty)
        // Sequence numbers go on: one never names two records.
        #expect(try log.append([Self.payload(20)]) == [11])
        #expect(try Self.size(path) == full, "an append after reset grew the file instead of overwriting")
        let head = try Self.bytes(of: path, from: SaveLog.headerSize).prefix(SaveLog.recordHeadSize)
        #expect(Array(head[8..<16]) == [2, 0, 0, 0, 0, 0, 0, 0], "the record after the header is not generation 2's")
        #expect(try log.records().map(\.payload) == [Self.payload(20)])
        #expect(try log.records(after: 10).map(\.sequence) == [11])
        // Another instance, on its own descriptor, appends in the new generation and sees no old record.
        let other = try SaveLog(path: path)
        #expect(try other.append([Self.payload(21)]) == [12])
        #expect(try log.append([Self.payload(22)]) == [13])
        #expect(try other.records().map(\.payload) == [Self.payload(20), Self.payload(21), Self.payload(22)])
        // A reset by another instance is seen by this one's next append.
        try other.reset()
        #expect(try log.append([Self.payload(23)]) == [14])
        #expect(try other.records().map(\.payload) == [Self.payload(23)])
        #expect(try Self.size(path) == full)
        // Two resets in a row use both header slots; the newer wins on reopening.
        try log.reset()
        #expect(try SaveLog(path: path).append([Self.payload(24)]) == [15])
        #expect(try log.records().map(\.payload) == [Self.payload(24)])
    }

    /// A torn header write leaves the other slot, the generation before, current.
    @Test func aDamagedHeaderSlotFallsBackToThePreviousGeneration() throws {
        let directory = TemporaryDirectory("truce-savelog")
        let path = directory.path + "/save.log"
        let log = try SaveLog(path: path)
        _ = try log.append([Self.payload(0)])
        try log.reset()
        #expect(try log.records().isEmpty)
        // Generation 2 lives in slot 0: damage it.
        try Self.write([0xEE], to: path, at: 20)
        #expect(try log.records().map(\.payload) == [Self.payload(0)])
        // Both slots damaged: not a log any more.
        try Self.write([0xEE], to: path, at: UInt64(SaveLog.slotOffsets[1] + 20))
        #expect(throws: SaveLogError.self) { try SaveLog(path: path) }
    }

    /// Eight threads on one instance: every append lands once, under a sequence number of its own. (How few syncs
    /// they share is counted in `FsyncCountTests`, where the fsync counter's watch is not shared with other suites.)
    @Test func concurrentAppendsLoseNothing() throws {
        let directory = TemporaryDirectory("truce-savelog")
        let log = try SaveLog(path: directory.path + "/save.log")
        let (appended, problems) = appendOnThreads(8, perThread: 50) { thread, index in
            let payload = saveLogCrashPayload(round: 0, thread: thread, index: index)
            return (try log.append([payload, payload.reversed()])[1], payload.reversed())
        }
        #expect(problems.isEmpty, "\(problems)")
        #expect(appended.count == 400)
        let read = try log.records()
        #expect(read.map(\.sequence) == Array(1...800))
        // Each call's two records are adjacent: a batch keeps a caller's records together and in order.
        #expect(read.allSatisfy { $0.sequence % 2 == 1 ? appended[$0.sequence + 1] == $0.payload.reversed() : appended[$0.sequence] == $0.payload })
    }

    /// Two instances on one file are two open file descriptions, as two processes' are: the flock orders them.
    @Test func twoInstancesOnOneFileSeeEachOthersRecords() throws {
        let directory = TemporaryDirectory("truce-savelog")
        let path = directory.path + "/save.log"
        let logs = [try SaveLog(path: path), try SaveLog(path: path)]
        var expected: [[UInt8]] = []
        for index in 0..<20 {
            let payload = Self.payload(index)
            #expect(try logs[index % 2].append([payload]) == [UInt64(index + 1)])
            expected.append(payload)
        }
        #expect(try logs[0].records().map(\.payload) == expected)
        #expect(try logs[1].records().map(\.payload) == expected)

        let (appended, problems) = appendOnThreads(4, perThread: 100) { thread, index in
            let payload = saveLogCrashPayload(round: 1, thread: thread, index: index)
            return (try logs[thread % 2].append([payload])[0], payload)
        }
        #expect(problems.isEmpty, "\(problems)")
        #expect(appended.count == 400)
        for log in logs {
            let read = try log.records()
            #expect(read.map(\.sequence) == Array(1...420))
            #expect(Array(read.prefix(20).map(\.payload)) == expected)
            #expect(read.dropFirst(20).allSatisfy { appended[$0.sequence] == $0.payload }, "a record overwritten or misread")
        }
    }

    /// `truce-bench`, built beside the test binary, whose `--save-log-child` mode appends until killed.
    static let childExecutable = URL(fileURLWithPath: truceExecutable).deletingLastPathComponent().appendingPathComponent("truce-bench").path

    /// A child appending on four threads is killed with SIGKILL at random moments; every sequence it printed (an
    /// acknowledged append) is read back with its payload, and the next child appends after what the last one left.
    @Test func everyAcknowledgedAppendSurvivesAKill() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.childExecutable), "no \(Self.childExecutable)")
        let directory = TemporaryDirectory("truce-savelog")
        let path = directory.path + "/save.log"
        var random = SeededRandom(seed: 2026)
        var acknowledged: [UInt64: [UInt8]] = [:]
        var total = 0, rounds = 0, killed = 0
        while rounds < 6 || (killed < 4 && rounds < 12) {
            rounds += 1
            let output = directory.path + "/round-\(rounds).out"
            FileManager.default.createFile(atPath: output, contents: nil)
            let handle = try #require(FileHandle(forWritingAtPath: output))
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Self.childExecutable)
            process.arguments = ["--save-log-child", path, "\(rounds)", "4"]
            process.standardOutput = handle
            process.standardError = FileHandle.nullDevice
            try process.run()
            Thread.sleep(forTimeInterval: 0.15 + 0.5 * random.unit())
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            try handle.close()
            if process.terminationReason == .uncaughtSignal { killed += 1 }
            // Whole lines only: the kill may cut the last one short, and its record may or may not be there.
            let text = try String(contentsOfFile: output, encoding: .utf8)
            for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
                let fields = line.split(separator: " ").compactMap { Int($0) }
                try #require(fields.count == 4, "child printed \(line)")
                let sequence = UInt64(fields[0])
                #expect(acknowledged[sequence] == nil, "sequence \(sequence) acknowledged twice")
                acknowledged[sequence] = saveLogCrashPayload(round: fields[1], thread: fields[2], index: fields[3])
                total += 1
            }
            let read = try SaveLog(path: path).records()
            let byNumber = Dictionary(read.map { ($0.sequence, $0.payload) }) { first, _ in first }
            let lost = acknowledged.filter { byNumber[$0.key] != $0.value }.keys.sorted()
            #expect(lost.isEmpty, "round \(rounds): acknowledged sequences lost or changed: \(lost.prefix(10))")
            if let firstNumber = read.first?.sequence {
                #expect(read.map(\.sequence) == Array(firstNumber..<firstNumber + UInt64(read.count)))
            }
            // Midway, a checkpoint's reset: the records so far leave, later children overwrite their blocks.
            if rounds == 3 {
                try SaveLog(path: path).reset()
                acknowledged = [:]
                #expect(try SaveLog(path: path).records().isEmpty)
            }
        }
        print("save log crash test: \(total) acknowledged appends over \(rounds) rounds, \(killed) children killed mid-run")
        #expect(killed >= 4, "too few children died of the kill for the test to mean anything")
        #expect(total >= rounds, "the children acknowledged almost nothing before being killed")
    }
}
