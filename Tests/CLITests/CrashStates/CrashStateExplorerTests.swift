import Foundation
import Synchronization
import TestSupport
import Testing

/// Every crash state a power cut could leave, for each kind of write: opened with truce, checked with git.
///
/// Each operation runs once under the tracer (`CrashTrace`), which records
/// every file-system call it makes on the store. `CrashStateModel` replays
/// the calls over a snapshot taken before, and at every point between two
/// calls builds the states the disk could hold after a power cut there
/// (ext4's ordered mode at its weakest: see the model). Each distinct state
/// is written out, opened with `truce status` (which lands a save log's
/// records, as any opening does), and must then pass `git fsck --strict`,
/// hold every version acknowledged before the cut (the first line the
/// operation printed is its acknowledgement). `make test` opens, for each
/// operation and point, the state holding only what is durable and those
/// where one directory's pending changes alone reached the disk, and a
/// seeded sample of the others; `HEAVY=1` opens every state the model builds
/// at every point, with two dozen random ones more per point, and also
/// checks that each takes a new save.
@Suite(.timeLimit(Reliability.isHeavy ? .minutes(180) : .minutes(20)), .serialized) struct CrashStateExplorerTests {
    /// What exploring one operation found.
    struct Exploration {
        var calls = 0
        var points = 0
        var states = 0
        /// Whether the run made the whole file system durable at once (`syncfs`), as a prune of many reflogs does.
        var syncedAll = false
        var problems: [String] = []
    }

    /// A state to open, what it must hold, and where in the run it was cut.
    struct Candidate {
        let state: CrashState
        var mustHold: Set<String>
        var label: String
        /// True for a core state (see `CrashStateModel.Survival.isCore`) at its point or at another.
        var isCore: Bool
    }

    /// Explores the crash points of `operation`: every state `CrashStateModel` builds at every point, with `random`
    /// more drawn per point (with `exhaustive`), or (without) its core states (`CrashStateModel.Survival.isCore`) and
    /// `sample` of the others drawn at random.
    static func explore(_ operation: StoreWriter, exhaustive: Bool, random: Int, sample: Int) throws -> Exploration {
        let setup = try operation.prepare()
        let before = try Reliability.reachableVersions(in: setup.store)
        var model = try CrashStateModel(snapshotOf: setup.store)
        let run = try CrashTrace.truce(setup.arguments, store: setup.store, input: setup.input, environment: setup.environment)
        guard run.result.status == 0 else { throw ReliabilityFailure("\(operation.rawValue) failed: \(run.result.errorOutput)") }
        let after = try Reliability.reachableVersions(in: setup.store)
        // Acknowledged before the operation: what it must keep at every point. A prune may drop a deleted document's
        // versions (and only those): what it keeps is what survives it whole.
        let kept = operation.dropsDeletedDocuments ? before.intersection(after) : before
        var exploration = Exploration(calls: run.calls.count, points: run.calls.count + 1, syncedAll: run.calls.contains { $0.kind == .syncAll })
        var seen: [CrashState: Int] = [:]
        var generator = SeededRandom(seed: 0xC4A5_0000 + UInt64(StoreWriter.allCases.firstIndex(of: operation)!))
        var acknowledged = false
        var candidates: [Candidate] = []
        for point in 0...run.calls.count {
            if point > 0 {
                model.apply(run.calls[point - 1])
                if run.calls[point - 1].kind == .acknowledge { acknowledged = true }
            }
            let mustHold = acknowledged ? kept.union(after) : kept
            let label = "after call \(point) of \(run.calls.count)\(acknowledged ? " (acknowledged)" : "")"
            for survival in model.survivals(random: exhaustive ? random : 1, generator: &generator) {
                let state = model.state(survival)
                if let known = seen[state] {
                    if survival.isCore { candidates[known].isCore = true }
                    // The same state after the acknowledgement must hold what was acknowledged.
                    if !mustHold.isSubset(of: candidates[known].mustHold) {
                        candidates[known].mustHold.formUnion(mustHold)
                        candidates[known].label = label
                    }
                    continue
                }
                seen[state] = candidates.count
                candidates.append(Candidate(state: state, mustHold: mustHold, label: label, isCore: survival.isCore))
            }
        }
        // The trace must hold every call: replayed whole, it is the store the run left.
        let left = try CrashStateModel(snapshotOf: setup.store).currentState
        let missed = model.currentState.differences(from: left) + model.unplaced
        if !missed.isEmpty { exploration.problems.append("the trace misses calls: \(missed.prefix(5))") }
        if !exhaustive {
            var others = candidates.filter { !$0.isCore }
            for index in others.indices.reversed() { others.swapAt(index, generator.int(0...index)) }
            candidates = candidates.filter(\.isCore) + others.prefix(sample)
        }
        exploration.states = candidates.count
        exploration.problems += try checkAll(candidates, in: setup.directory, withNextSave: exhaustive)
        return exploration
    }

    /// Opens and checks `candidates` on as many threads as there are cores; the problems found, by state.
    static func checkAll(_ candidates: [Candidate], in directory: TemporaryDirectory, withNextSave: Bool) throws -> [String] {
        let found = Mutex<[(Int, String)]>([])
        let workers = max(1, min(ProcessInfo.processInfo.activeProcessorCount, 4))
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            for index in stride(from: worker, to: candidates.count, by: workers) {
                // A few findings say enough; the rest would only repeat them.
                if found.withLock({ $0.count >= 5 }) { return }
                let candidate = candidates[index]
                do {
                    let problems = try check(candidate.state, mustHold: candidate.mustHold, in: directory, withNextSave: withNextSave)
                    found.withLock { $0 += problems.map { (index, "\(candidate.label): \($0)") } }
                } catch {
                    found.withLock { $0.append((index, "\(candidate.label): the check could not run: \(error)")) }
                }
            }
        }
        return found.withLock { $0 }.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// What is wrong with `state` once opened: empty when truce opens it, git fsck is clean, it holds `mustHold` (in
    /// git, or in the save log, where every read finds it), and a save goes through and lands what the log held.
    static func check(_ state: CrashState, mustHold: Set<String>, in directory: TemporaryDirectory, withNextSave: Bool) throws -> [String] {
        let path = directory.file("state-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try state.write(to: path, age: 60)
        let opened = try truce(["status"], store: path)
        guard opened.status == 0 else { return ["truce cannot open it: \(opened.errorLines.joined(separator: " "))"] }
        var problems = try Reliability.fsckProblems(path).map { "git fsck: \($0)" }
        // What reads see: git's versions, and the changes `truce changes` lists from the save log after the journal's.
        let changes = try truce(["changes", "--json"], store: path)
        if changes.status != 0 { problems.append("truce changes fails: \(changes.errorLines.joined(separator: " "))") }
        let listed = Set(changes.output.matches(of: /[0-9a-f]{40}/).map { String($0.output) })
        let lost = mustHold.subtracting(((try? Reliability.reachableVersions(in: path)) ?? []).union(listed))
        if !lost.isEmpty { problems.append("lost acknowledged version(s) \(lost.sorted().map { String($0.prefix(12)) })") }
        guard withNextSave else { return problems }
        let next = try truce(["save", "after-the-cut.txt", "-", "--device", "next"], store: path, input: .text("next\n"))
        if next.status != 0 { problems.append("the next save fails: \(next.errorLines.joined(separator: " "))") }
        // A writer lands what the log held before it writes.
        let unlanded = mustHold.subtracting((try? Reliability.reachableVersions(in: path)) ?? [])
        if next.status == 0, !unlanded.isEmpty {
            problems.append("the next save did not land acknowledged version(s) \(unlanded.sorted().map { String($0.prefix(12)) })")
        }
        return problems
    }

    @Test(arguments: StoreWriter.selected) func everyCrashStateOpensCleanAndHoldsWhatWasAcknowledged(_ operation: StoreWriter) throws {
        let exploration = try Self.explore(operation, exhaustive: Reliability.isHeavy, random: 24, sample: 8)
        print(
            "crash states: \(operation.rawValue): \(exploration.calls) calls traced, \(exploration.points) crash points, "
                + "\(exploration.states) distinct states opened\(Reliability.isHeavy ? " (HEAVY)" : "")")
        #expect(exploration.states >= 10, "too few states to prove anything")
        if operation == .pruneMany { #expect(exploration.syncedAll, "the prune of many reflogs made them durable one by one, not with syncfs") }
        #expect(exploration.problems.isEmpty, "\(operation.rawValue): \(exploration.problems.joined(separator: "\n"))")
    }
}
