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
/// (`core.fsyncObjectFiles`, libgit2's fsync of the git directory, which the
/// benchmark leaves on), SQLite fsyncs its WAL at every commit.
enum DurableSaveRows {
    /// The writers of the concurrent row; the documents divide among them, so no two write the same document.
    static let writers = 8

    static func peer(_ scale: Scale) throws -> [Row] {
        let directory = scratchDirectory("durable")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let saves = StoreRows.batch(scale.durableSaves, documents: scale.durableDocuments, seed: 13)
        // The last content saved to each document: its current version (Truce) or head row (SQLite) afterwards.
        let last = Dictionary(saves.map { ($0.key, $0.content!) }) { $1 }

        /// With `saveLog`, the time includes the checkpoint that lands every save in git: the whole durable work.
        func truce(writers: Int, name: String, saveLog: Bool = true) throws -> (rate: Double, landed: Bool) {
            let store = try DocumentStore.create(at: "\(directory)/\(name)", saveLog: saveLog)
            settle()
            let time = try seconds {
                try onThreads(writers) { writer in
                    for save in saves.indices.filter({ $0 % writers == writer }).map({ saves[$0] }) {
                        _ = try store.save(save.content!, to: save.key, device: save.device, date: save.date)
                    }
                }
                try store.checkpoint()
            }
            let landed = try last.allSatisfy { try store.contents(of: $0.key) == $0.value && store.unresolvedConflictVersions(of: $0.key).isEmpty }
            return (Double(saves.count) / time, landed)
        }

        func sqlite(writers: Int, name: String) throws -> (rate: Double, landed: Bool) {
            let path = "\(directory)/\(name).sqlite"
            let connections = try (0..<writers).map { _ in try SQLitePeer(path: path) }
            settle()
            let time = try seconds {
                try onThreads(writers) { writer in
                    let connection = connections[writer]
                    for save in saves.indices.filter({ $0 % writers == writer }).map({ saves[$0] }) {
                        try connection.save(save.key.rawValue, content: save.content!, device: save.device ?? "bench", date: save.date)
                    }
                }
            }
            let check = connections[0]
            let landed =
                try check.count("versions") == saves.count && check.count("history") == saves.count
                && check.count("heads") == last.count && last.allSatisfy { try check.headContent(of: $0.key.rawValue) == $0.value }
            return (Double(saves.count) / time, landed)
        }

        precondition(scale.durableDocuments % writers == 0, "the documents must divide among the writers")
        let one = try truce(writers: 1, name: "one"), oneSQLite = try sqlite(writers: 1, name: "one")
        let many = try truce(writers: writers, name: "many"), manySQLite = try sqlite(writers: writers, name: "many")
        let straight = try truce(writers: 1, name: "straight", saveLog: false)
        let sizes = "\(saves.count) saves across \(scale.durableDocuments) documents"
        return [
            Row(
                work: "durable saves, one writer in process (save through the save log, then the checkpoint into git; \(sizes))",
                truce: String(format: "%.0f saves/s", one.rate),
                baseline: String(format: "SQLite WAL, synchronous=FULL: %.0f saves/s", oneSQLite.rate), ratio: one.rate / oneSQLite.rate,
                target: "≥ 1× SQLite", met: one.landed && oneSQLite.landed && one.rate >= oneSQLite.rate),
            Row(
                work: "  \(writers) writers on different documents, \(writers) threads on one store (SQLite: \(writers) connections)",
                truce: String(format: "%.0f saves/s", many.rate),
                baseline: String(format: "SQLite, %d writers: %.0f saves/s", writers, manySQLite.rate), ratio: many.rate / manySQLite.rate,
                target: "≥ 1× SQLite", met: many.landed && manySQLite.landed && many.rate >= manySQLite.rate),
            Row(
                work: "  one writer, each save straight into git (a store without the save log)",
                truce: String(format: "%.0f saves/s", straight.rate),
                baseline: String(format: "SQLite: %.0f saves/s", oneSQLite.rate), ratio: straight.rate / oneSQLite.rate,
                target: "(reference)", met: straight.landed),
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
