import Foundation
import Synchronization
import Truce

#if canImport(Glibc)
    import Glibc
#endif

/// Durable saves one at a time, in process, against SQLite doing the equivalent durable work (`SQLitePeer`).
///
/// Both sides save the same contents (`StoreRows.batch`) to the same
/// documents, each into a fresh store or database, and each save is durable
/// when it returns: the store fsyncs what libgit2 and Truce write
/// (libgit2's fsync of the git directory, `GIT_OPT_ENABLE_FSYNC_GITDIR`, which
/// the benchmark leaves on), SQLite fsyncs its WAL at every commit.
enum DurableSaveRows {
    /// The writers of the concurrent row; the documents divide among them, so no two write the same document.
    static let writers = 8

    static func peer(_ scale: Scale) throws -> [Row] {
        let directory = scratchDirectory("durable")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let saves = StoreRows.batch(scale.durableSaves, documents: scale.durableDocuments, seed: 13)
        // The last content saved to each document: its current version (Truce) or head row (SQLite) afterwards.
        let last = Dictionary(saves.map { ($0.key, $0.content!) }) { $1 }

        /// Saves per second while saving (each save durable when it returns), and until every save is in its final
        /// home too: in git after Truce's checkpoint, in the database file after SQLite's.
        struct Rates {
            let durable: Double, homed: Double, landed: Bool
        }

        func truce(writers: Int, name: String, saveLog: Bool = true) throws -> Rates {
            let store = try DocumentStore(directory: URL(fileURLWithPath: "\(directory)/\(name)"), mode: .createNew, saveLog: saveLog)
            settle()
            let clock = ContinuousClock.now
            try onThreads(writers) { writer in
                for save in saves.indices.filter({ $0 % writers == writer }).map({ saves[$0] }) {
                    _ = try store.save(save.content!, to: save.key, device: save.device, date: save.date)
                }
            }
            let saved = clock.duration(to: .now)
            try store.checkpoint()
            let homed = clock.duration(to: .now)
            let landed = try last.allSatisfy { try store.contents(of: $0.key) == $0.value && store.unresolvedConflictVersions(of: $0.key).isEmpty }
            return Rates(durable: Double(saves.count) / saved.seconds, homed: Double(saves.count) / homed.seconds, landed: landed)
        }

        func sqlite(writers: Int, name: String) throws -> Rates {
            let path = "\(directory)/\(name).sqlite"
            let connections = try (0..<writers).map { _ in try SQLitePeer(path: path) }
            settle()
            let clock = ContinuousClock.now
            try onThreads(writers) { writer in
                let connection = connections[writer]
                for save in saves.indices.filter({ $0 % writers == writer }).map({ saves[$0] }) {
                    try connection.save(save.key.rawValue, content: save.content!, device: save.device ?? "bench", date: save.date)
                }
            }
            let saved = clock.duration(to: .now)
            try connections[0].checkpoint()
            let homed = clock.duration(to: .now)
            let check = connections[0]
            let landed =
                try check.count("versions") == saves.count && check.count("history") == saves.count
                && check.count("heads") == last.count && last.allSatisfy { try check.headContent(of: $0.key.rawValue) == $0.value }
            return Rates(durable: Double(saves.count) / saved.seconds, homed: Double(saves.count) / homed.seconds, landed: landed)
        }

        precondition(scale.durableDocuments % writers == 0, "the documents must divide among the writers")
        let one = try truce(writers: 1, name: "one"), oneSQLite = try sqlite(writers: 1, name: "one")
        let many = try truce(writers: writers, name: "many"), manySQLite = try sqlite(writers: writers, name: "many")
        let straight = try truce(writers: 1, name: "straight", saveLog: false)
        let sizes = "\(saves.count) saves across \(scale.durableDocuments) documents"
        func rate(_ value: Double) -> String { String(format: "%.0f saves/s", value) }
        return [
            Row(
                work: "durable saves, one writer in process (save, through the save log; \(sizes))", truce: rate(one.durable),
                baseline: "SQLite WAL, synchronous=FULL: " + rate(oneSQLite.durable), ratio: one.durable / oneSQLite.durable,
                target: "≥ 1.2× SQLite", met: one.landed && oneSQLite.landed && one.durable >= 1.2 * oneSQLite.durable),
            Row(
                work: "  the same, until every save is in git (checkpoint) and in SQLite's database file (wal_checkpoint)",
                truce: rate(one.homed), baseline: "SQLite: " + rate(oneSQLite.homed), ratio: one.homed / oneSQLite.homed,
                target: "(reference)", met: one.landed && oneSQLite.landed),
            Row(
                work: "  \(writers) writers on different documents, \(writers) threads on one store (SQLite: \(writers) connections)",
                truce: rate(many.durable), baseline: "SQLite, \(writers) writers: " + rate(manySQLite.durable),
                ratio: many.durable / manySQLite.durable, target: "≥ 1× SQLite",
                met: many.landed && manySQLite.landed && many.durable >= manySQLite.durable),
            Row(
                work: "  one writer, each save straight into git (a store without the save log)", truce: rate(straight.durable),
                baseline: "SQLite: " + rate(oneSQLite.durable), ratio: straight.durable / oneSQLite.durable, target: "(reference)",
                met: straight.landed),
        ]
    }
}

/// Writes every dirty page of the machine to disk before a timed run: otherwise the next side's first fsyncs
/// (a file system journals them together) pay for what the previous side left in the page cache.
func settle() {
    #if canImport(Glibc)
        Glibc.sync()
    #endif
}

/// Runs `body(0)` … `body(count - 1)` on `count` threads of their own at once, and waits for all of them.
///
/// Real threads, not `concurrentPerform`, which runs no more at once than
/// there are cores: eight writers must be eight, on two cores too. The first
/// error any of them threw is rethrown.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) throws -> Void) throws {
    let failure = Mutex<(any Error)?>(nil)
    let done = DispatchGroup()
    for index in 0..<count {
        done.enter()
        Thread {
            do { try body(index) } catch { failure.withLock { $0 = $0 ?? error } }
            done.leave()
        }.start()
    }
    done.wait()
    if let error = failure.withLock({ $0 }) { throw error }
}
