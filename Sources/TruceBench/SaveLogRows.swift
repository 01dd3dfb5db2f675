import Foundation
import Synchronization
import Testbed
import TruceGit
import TruceSaveLog

/// The save log's durable appends one at a time against SQLite's durable saves (`SQLitePeer`), both 1 KB each.
///
/// The log's append returns after one `fdatasync`, as a save through it
/// will; the SQLite peer commits one transaction per save. The second row
/// times the same appends after a `reset`, when they overwrite blocks the
/// file already has: the steady state once checkpoints reset the log.
enum SaveLogRows {
    static let recordBytes = 1024

    static func appends(_ scale: Scale) throws -> [Row] {
        let directory = scratchDirectory("save-log")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let count = scale.durableSaves
        let payloads = (0..<count).map { index in (0..<recordBytes).map { UInt8(truncatingIfNeeded: $0 &+ index) } }
        let log = try SaveLog(path: "\(directory)/save.log")

        func timedAppends() throws -> (rate: Double, landed: Bool) {
            settle()
            var sequences: [UInt64] = []
            let time = try seconds { for payload in payloads { sequences += try log.append([payload]) } }
            let read = try log.records()
            let landed = read.map(\.sequence) == sequences && read.map(\.payload) == payloads
            return (Double(count) / time, landed)
        }
        let growing = try timedAppends()
        try log.reset()
        let overwriting = try timedAppends()

        let peer = try SQLitePeer(path: "\(directory)/peer.sqlite")
        settle()
        let content = Data(payloads[0])
        let sqliteTime = try seconds {
            for index in 0..<count { try peer.save("docs/\(index % 100).txt", content: content, device: "bench", date: Date()) }
        }
        let sqliteRate = Double(count) / sqliteTime
        let sqliteLanded = try peer.count("versions") == count
        let baseline = String(format: "SQLite WAL, synchronous=FULL: %.0f saves/s", sqliteRate)
        return [
            Row(
                work: "save log: \(count) durable appends of 1 KB, one at a time, growing the file",
                truce: String(format: "%.0f appends/s", growing.rate), baseline: baseline, ratio: growing.rate / sqliteRate,
                target: "≥ 1× SQLite", met: growing.landed && sqliteLanded && growing.rate >= sqliteRate),
            Row(
                work: "  the same after a reset, overwriting the file's blocks in place",
                truce: String(format: "%.0f appends/s", overwriting.rate), baseline: baseline, ratio: overwriting.rate / sqliteRate,
                target: "≥ 1× SQLite", met: overwriting.landed && sqliteLanded && overwriting.rate >= sqliteRate),
        ]
    }

    /// `truce-bench --save-log-child PATH ROUND THREADS`: appends from THREADS threads until killed, printing
    /// `sequence round thread index` for each acknowledged record, the save log's crash test's child.
    static func child(_ arguments: [String]) throws -> Never {
        guard arguments.count == 3, let round = Int(arguments[1]), let threads = Int(arguments[2]) else {
            FileHandle.standardError.write(Data("usage: truce-bench --save-log-child PATH ROUND THREADS\n".utf8))
            exit(2)
        }
        let log = try SaveLog(path: arguments[0])
        let output = Mutex(())
        try onThreads(threads) { thread in
            for index in 0... {
                let sequence = try log.append([saveLogCrashPayload(round: round, thread: thread, index: index)])[0]
                // One write(2) per line, after the append returned: a line printed is a record acknowledged.
                output.withLock { _ in FileHandle.standardOutput.write(Data("\(sequence) \(round) \(thread) \(index)\n".utf8)) }
            }
        }
        exit(0)
    }
}
