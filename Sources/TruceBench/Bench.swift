import Foundation
import Truce

// Rows call the store's calling-thread forms (package access: `saveBatchOnCallingThread`, `syncOnCallingThread`,
// `pruneOnCallingThread`, `importDocumentsOnCallingThread`), the work the async API runs on its executor, so a row times the work and not a hop.

/// One line of the results table: a piece of work, Truce's figure, the baseline's, their ratio and the target.
struct Row: Encodable {
    let work: String
    let truce: String
    let baseline: String
    /// The ratio in the target's direction (for example git's time over Truce's when the target is "at least 20 times faster").
    let ratio: Double
    let target: String
    let met: Bool
}

/// `swift run -c release truce-bench [--quick] [--json] [--only NAME]`: Truce and its git baselines on the same work, side by side;
/// `--scale [--million]` runs the store-size rows instead (`ScaleRows`), `--replicas 2,100,1000` the rows of a hub many
/// replicas share (`ReplicaRows`), `--encrypted [--quick]` an encrypted hub beside a plain one (`EncryptedHubRows`).
@main
struct Bench {
    static func main() async throws {
        if CommandLine.arguments.count > 1 && CommandLine.arguments[1] == "--peak-of" { peakOf(Array(CommandLine.arguments.dropFirst(2))) }
        // Not a benchmark: the child process the save log's crash test kills (`SaveLogRows.child`).
        if CommandLine.arguments.dropFirst().first == "--save-log-child" { try SaveLogRows.child(Array(CommandLine.arguments.dropFirst(2))) }
        let arguments = Set(CommandLine.arguments.dropFirst())
        let quick = arguments.contains("--quick")
        let only = CommandLine.arguments.firstIndex(of: "--only").flatMap {
            CommandLine.arguments.indices.contains($0 + 1) ? CommandLine.arguments[$0 + 1] : nil
        }
        let scale = Scale(quick: quick)
        if let index = CommandLine.arguments.firstIndex(of: "--replicas") {
            let counts = CommandLine.arguments.dropFirst(index + 1).first.map { $0.split(separator: ",").compactMap { Int($0) } } ?? []
            guard !counts.isEmpty else {
                FileHandle.standardError.write(Data("truce-bench: --replicas needs counts, such as 2,100,1000\n".utf8))
                exit(2)
            }
            do {
                print(table(try ReplicaRows.rows(counts: counts) + (try await ReplicaRows.convergence())))
                return
            } catch {
                FileHandle.standardError.write(Data("truce-bench: replicas failed: \(error)\n".utf8))
                exit(1)
            }
        }
        if arguments.contains("--encrypted") {
            do {
                print(table(try await EncryptedHubRows.rows(quick: quick)))
                return
            } catch {
                FileHandle.standardError.write(Data("truce-bench: encrypted failed: \(error)\n".utf8))
                exit(1)
            }
        }
        if arguments.contains("--scale") {
            // The store-size rows alone: they take long, and the default run stays as it was.
            do {
                print(table(try ScaleRows.rows(sizes: ScaleRows.sizes(quick: quick, million: arguments.contains("--million")))))
                return
            } catch {
                FileHandle.standardError.write(Data("truce-bench: scale failed: \(error)\n".utf8))
                exit(1)
            }
        }
        let sections: [(String, (Scale) async throws -> [Row])] = [
            ("merge", MergeRows.manyTriples), ("large", MergeRows.largeTriple),
            ("saves", StoreRows.saves), ("durable", DurableSaveRows.peer), ("save-log", SaveLogRows.appends),
            ("resolve", StoreRows.resolve), ("replay", StoreRows.replay), ("versions", StoreRows.versions), ("changes", StoreRows.statusAndChanges),
            ("prune", StoreRows.prune), ("import", ImportRows.folder), ("memory", MergeRows.memory), ("convergence", ConvergenceRows.replicas),
            ("structured", StructuredRows.correctness), ("structured-large", StructuredRows.largeDocument), ("sync", SyncRows.atScale),
        ]
        var rows: [Row] = []
        for (name, section) in sections where only == nil || only == name {
            FileHandle.standardError.write(Data("truce-bench: \(name)…\n".utf8))
            do {
                rows += try await section(scale)
            } catch {
                // A row whose work failed has no figure to report: say which and why, and exit non-zero.
                FileHandle.standardError.write(Data("truce-bench: \(name) failed: \(error)\n".utf8))
                exit(1)
            }
        }
        if arguments.contains("--json") {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            FileHandle.standardOutput.write(try encoder.encode(rows) + Data("\n".utf8))
        } else {
            print(table(rows))
        }
    }

    static func table(_ rows: [Row]) -> String {
        let header = ["work", "Truce", "baseline", "ratio", "target", ""]
        let cells = rows.map { [$0.work, $0.truce, $0.baseline, String(format: "%.2f", $0.ratio), $0.target, $0.met ? "met" : "MISSED"] }
        let widths = header.indices.map { column in ([header] + cells).map { $0[column].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            "| " + zip(cells, widths).map { $0 + String(repeating: " ", count: $1 - $0.count) }.joined(separator: " | ") + " |"
        }
        return ([line(header), "|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|"] + cells.map(line))
            .joined(separator: "\n")
    }
}

/// How much work each row does: the sizes, or about a minute's worth with `--quick`.
struct Scale {
    let quick: Bool
    var triples: Int { quick ? 300 : 2000 }
    var largeBytes: Int { quick ? 10_000_000 : 50_000_000 }
    var memoryBytes: Int { quick ? 20_000_000 : 100_000_000 }
    var saves: Int { quick ? 2000 : 10_000 }
    var savedDocuments: Int { quick ? 200 : 1000 }
    var plumbingSample: Int { quick ? 40 : 200 }
    /// Durable saves one at a time against SQLite; the documents divide among `DurableSaveRows.writers`.
    var durableSaves: Int { quick ? 96 : 1000 }
    var durableDocuments: Int { quick ? 24 : 200 }
    var conflicts: Int { quick ? 100 : 1000 }
    var storeSizes: [Int] { quick ? [100, 1000, 10_000] : [100, 10_000, 100_000] }
    var changedDocuments: (few: Int, many: Int) { quick ? (10, 1000) : (10, 10_000) }
    var largeStore: Int { quick ? 5000 : 20_000 }
    var droppedVersions: Int { quick ? 2000 : 10_000 }
    var importedFiles: Int { quick ? 2000 : 10_000 }
    var cores: Int { ProcessInfo.processInfo.activeProcessorCount }
    var structuredTriples: Int { quick ? 240 : 1000 }
    var syncedDocuments: [Int] { quick ? [1000] : [10_000, 100_000] }
}

/// Formats seconds for the table.
func format(_ seconds: Double) -> String {
    seconds < 0.01 ? String(format: "%.2f ms", seconds * 1000) : String(format: "%.2f s", seconds)
}

/// A fresh directory for one row's stores and files.
func scratchDirectory(_ name: String) -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("truce-bench-\(name)-\(UUID().uuidString)").path
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// Writes a benchmark input file; a failure shows up as a wrong result in the row that needs it.
func writeFile(_ path: String, _ data: Data?) {
    try? (data ?? Data()).write(to: URL(fileURLWithPath: path))
}
