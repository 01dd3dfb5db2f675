import Foundation
import TestSupport
import Testing

/// `save`, `resolve`, `sync` and `prune --now` killed with SIGKILL at random moments, one at a time.
///
/// After every kill: `git fsck --strict` is clean in each store the killed
/// process wrote, every version acknowledged so far is still reachable from a
/// head, and the next `truce save` succeeds within `nextWriterBound`: a lock
/// file the dead process left is taken aside once it is five seconds old
/// (`StaleLocks.swift`), so the worst case is about seven seconds. Nothing
/// else writes while a `prune --now` runs, the only way that mode is safe.
///
/// The loop proves something only if most kills land mid-way, whatever the
/// machine's load: each operation's kill delay follows how long it has been
/// taking, and the loop goes on past `iterations` until half that many
/// processes died of the kill (up to three times as many attempts).
@Suite(.timeLimit(.minutes(20)), .serialized) struct ReliabilityCrashTests {
    enum Operation: String, CaseIterable {
        case save
        case saveFromBase = "save --base"
        case resolve, sync
        case prune = "prune --now"
    }

    static let nextWriterBound: TimeInterval = 10
    static let documents = ["notes/0.txt", "notes/1.txt", "notes/2.md", "notes/3.md", "deep/a/b/4.txt"]

    /// The two replicas and what each acknowledged, per document.
    struct Replicas {
        let paths: [String]
        var acknowledged: [[String: [String]]]

        func all(_ store: Int) -> Set<String> { Set(acknowledged[store].values.joined()) }

        mutating func acknowledge(_ id: String, of document: String, in store: Int) {
            acknowledged[store][document, default: []].append(id)
        }

        /// After a finished sync each store has every version the other acknowledged.
        mutating func synced() {
            for document in ReliabilityCrashTests.documents {
                let union = Array(Set((acknowledged[0][document] ?? []) + (acknowledged[1][document] ?? []))).sorted()
                acknowledged[0][document] = union
                acknowledged[1][document] = union
            }
        }
    }

    /// Random text of a few lines; sometimes CRLF, sometimes without a final newline.
    static func content(_ random: inout SeededRandom, iteration: Int, lines: Int) -> Data {
        var text = (0..<random.int(1...lines)).map { "line \($0) \(random.int(0...9))" }
        text.insert("iteration \(iteration)", at: random.int(0...text.count))
        let eol = random.chance(20) ? "\r\n" : "\n"
        return Data((text.joined(separator: eol) + (random.chance(80) ? eol : "")).utf8)
    }

    /// How long an operation takes unharmed, as far as the loop has seen, so that kills land anywhere in it.
    struct Durations {
        /// No delay beyond this: a run that met something slow must not push every kill past the end.
        static let longest: TimeInterval = 2
        private var typical: [Operation: TimeInterval] = [:]

        /// When to kill the next run of `operation`: from a tenth to 1.1 times its typical length.
        func delay(for operation: Operation, random: inout SeededRandom) -> TimeInterval {
            (typical[operation] ?? Self.longest) * (0.1 + random.unit())
        }

        /// A run that finished took `seconds`: later kills aim within that.
        mutating func finished(_ operation: Operation, after seconds: TimeInterval) {
            let seen = min(seconds, Self.longest)
            typical[operation] = typical[operation].map { ($0 + seen) / 2 } ?? seen
        }

        /// A run was still going after `seconds`: it takes at least that long now (say, on a busier machine).
        mutating func killed(_ operation: Operation, after seconds: TimeInterval) {
            typical[operation] = min(max(typical[operation] ?? 0, seconds), Self.longest)
        }
    }

    @Test func killedWritersLoseNothingAndBlockNoOne() throws {
        let seed = Reliability.seed(0x0C4A_5E5D, for: "crash")
        let iterations = Reliability.size(ci: 200, heavy: 1000)
        let requiredKills = iterations / 2
        let lines = Reliability.size(ci: 20, heavy: 400)
        var random = SeededRandom(seed: seed)
        let directory = TemporaryDirectory("truce-crash")
        var replicas = Replicas(
            paths: [try Reliability.makeStore(in: directory, named: "a"), try Reliability.makeStore(in: directory, named: "b")],
            acknowledged: [[:], [:]])
        let started = Date()

        // Every document starts in conflict in store a, then both stores hold it.
        for document in Self.documents {
            let base = try truce(
                ["save", document, "-", "--device", "setup"], store: replicas.paths[0], input: Self.content(&random, iteration: -1, lines: lines))
            let baseID = try #require(Reliability.savedID(base.output))
            replicas.acknowledge(baseID, of: document, in: 0)
            for device in ["laptop", "phone"] {
                let result = try truce(
                    ["save", document, "-", "--device", device, "--base", baseID], store: replicas.paths[0],
                    input: Self.content(&random, iteration: -1, lines: lines))
                replicas.acknowledge(try #require(Reliability.savedID(result.output)), of: document, in: 0)
            }
        }
        #expect(try truce(["sync", replicas.paths[1]], store: replicas.paths[0]).status == 0)
        replicas.synced()

        // A first unharmed run of each operation, so that kills land anywhere in it, not only during start-up.
        var durations = Durations()
        for operation in Operation.allCases {
            let (arguments, _) = Self.arguments(for: operation, document: Self.documents[0], store: 0, replicas: replicas, random: &random)
            let process = try BackgroundProcess(arguments, store: replicas.paths[0], input: Self.content(&random, iteration: -1, lines: lines))
            let ending = process.wait()
            #expect(!ending.overran, "an unharmed \(operation.rawValue) ran for more than a minute")
            durations.finished(operation, after: ending.seconds)
            if ending.status == 0 { try Self.acknowledge(ending, of: operation, document: Self.documents[0], store: 0, replicas: &replicas) }
        }

        var problems: [String] = []
        var iteration = 0, kills = 0, finished = 0, slowestNextSave: TimeInterval = 0, staleLockWaits = 0
        var killsByOperation: [Operation: Int] = [:]
        while (iteration < iterations || kills < requiredKills) && iteration < iterations * 3 && problems.count < 5 {
            defer { iteration += 1 }
            let operation = random.pick([Operation.save, .save, .saveFromBase, .resolve, .resolve, .sync, .prune, .prune])
            let store = random.int(0...1)
            let document = random.pick(Self.documents)
            let (arguments, touched) = Self.arguments(for: operation, document: document, store: store, replicas: replicas, random: &random)
            let delay = durations.delay(for: operation, random: &random)
            let context =
                "iteration \(iteration), \(operation.rawValue) \(document) in store \(store), killed after \(Int(delay * 1000)) ms, seed \(seed)"

            let process = try BackgroundProcess(
                arguments, store: replicas.paths[store], input: Self.content(&random, iteration: iteration, lines: lines))
            usleep(UInt32(delay * 1_000_000))
            let sent = process.kill()
            let ending = process.wait()
            if ending.overran {
                problems.append("\(context): still running a minute after it was killed")
            } else if ending.killed && !(sent && ending.status == SIGKILL) {
                // Only the loop's own SIGKILL counts as a kill; any other signal is the process crashing.
                problems.append("\(context): died of signal \(ending.status) without being killed: \(ending.errorOutput)")
            } else if ending.killed {
                kills += 1
                killsByOperation[operation, default: 0] += 1
                durations.killed(operation, after: delay)
            } else {
                durations.finished(operation, after: ending.seconds)
                finished += 1
                if ending.status == 0 {
                    try Self.acknowledge(ending, of: operation, document: document, store: store, replicas: &replicas)
                } else if !Self.isAllowedFailure(ending, of: operation, document: document) {
                    problems.append("\(context): finished with exit \(ending.status): \(ending.errorOutput)")
                }
            }

            for index in touched {
                let fsck = try Reliability.fsckProblems(replicas.paths[index])
                if !fsck.isEmpty { problems.append("\(context): git fsck --strict in store \(index): \(fsck.prefix(5).joined(separator: " | "))") }
                let lost = try Reliability.lostVersions(replicas.all(index), in: replicas.paths[index])
                if !lost.isEmpty { problems.append("\(context): store \(index) lost acknowledged versions \(lost)") }
            }
            // The next writer must not be blocked by what the dead one left.
            for index in touched {
                let next = random.pick(Self.documents)
                var words = ["save", next, "-", "--device", "next"]
                if random.chance(50), let base = replicas.acknowledged[index][next]?.last { words += ["--base", base] }
                let clock = Date()
                let result = try truce(words, store: replicas.paths[index], input: Self.content(&random, iteration: iteration, lines: lines))
                let seconds = Date().timeIntervalSince(clock)
                slowestNextSave = max(slowestNextSave, seconds)
                if seconds > 1 { staleLockWaits += 1 }
                guard result.status == 0, let id = Reliability.savedID(result.output) else {
                    problems.append(
                        "\(context): the next save in store \(index) failed after \(String(format: "%.1f", seconds)) s: \(result.errorOutput)")
                    continue
                }
                if seconds >= Self.nextWriterBound {
                    problems.append("\(context): the next save in store \(index) took \(String(format: "%.1f", seconds)) s")
                }
                replicas.acknowledge(id, of: next, in: index)
            }
        }

        #expect(problems.isEmpty, "\(problems.count) problems (seed \(seed)):\n\(problems.joined(separator: "\n"))")
        for index in 0...1 {
            // A kill between a head and its conflict marker leaves `status` a hint short until prune rebuilds the markers.
            let prune = try truce(["prune"], store: replicas.paths[index])
            #expect(prune.status == 0, "store \(index): prune after the loop: \(prune.errorOutput)")
            let status = try truce(["status", "--json"], store: replicas.paths[index])
            let listed = ((try JSONSerialization.jsonObject(with: status.stdout) as? [String: Any])?["inConflict"] as? [[String: Any]] ?? [])
                .compactMap { $0["document"] as? String }
            var inConflict: [String] = []
            for document in Self.documents {
                let versions = try truce(["versions", document, "--json"], store: replicas.paths[index])
                if (try JSONSerialization.jsonObject(with: versions.stdout) as? [String: Any])?["state"] as? String == "inConflict" {
                    inConflict.append(document)
                }
            }
            #expect(Set(listed) == Set(inConflict), "store \(index): status lists \(listed), versions says \(inConflict) (seed \(seed))")
            #expect(try Reliability.fsckProblems(replicas.paths[index]).isEmpty)
            let unjournaled = replicas.all(index).subtracting(try Reliability.journaledVersions(in: replicas.paths[index]))
            #expect(unjournaled.isEmpty, "store \(index): truce changes lacks acknowledged versions \(unjournaled.sorted()) (seed \(seed))")
        }
        // Enough processes must really have died mid-way, each kind of them, or the loop proves little.
        #expect(kills >= requiredKills, "only \(kills) of \(iteration) processes were killed before they finished (seed \(seed))")
        let neverKilled = Operation.allCases.filter { killsByOperation[$0] == nil }.map(\.rawValue)
        #expect(neverKilled.isEmpty, "no \(neverKilled) process was ever killed mid-way (seed \(seed))")
        print(
            "reliability: crash \(iteration) iterations: \(kills) killed (\(killsByOperation.map { "\($0.key.rawValue) \($0.value)" }.sorted().joined(separator: ", "))), "
                + "\(finished) finished first, \(staleLockWaits) next saves waited for a stale lock, slowest \(String(format: "%.1f", slowestNextSave)) s, "
                + String(format: "%.1f s", Date().timeIntervalSince(started)))
    }

    /// Several `truce save` processes on one store at once, each killed with SIGKILL at its own random moment.
    ///
    /// A round starts `writers` saves together, to the shared documents and
    /// to documents of their own, some from an acknowledged base (so the
    /// document goes into conflict), and kills each after its own delay,
    /// drawn from how long a save has been taking under the same contention.
    /// After each round, that is after each batch of up to `writers` kills
    /// (fsck per kill would stop the concurrency the test is about): `git
    /// fsck --strict` is clean, every version acknowledged so far (exit 0, or
    /// an id printed before the kill) is reachable from a head, and the next
    /// save succeeds within `nextWriterBound`. Rounds go on until
    /// `requiredKills` processes died of the kill: 40 normally, 500 with
    /// `HEAVY=1`.
    ///
    /// With the save log on, a killed save may leave its record in the log
    /// alone: the checks run after another Truce process (`truce status`)
    /// opened the store, which lands it, and the saves that landed only then
    /// prove that kills fell between a record and its checkpoint.
    @Test(arguments: [false, true]) func concurrentSaversKilledLoseNothing(saveLog: Bool) throws {
        let seed = Reliability.seed(saveLog ? 0x5A7E_C0DF : 0x5A7E_C0DE, for: saveLog ? "concurrent crash, save log" : "concurrent crash")
        let requiredKills = Reliability.size(ci: 40, heavy: 500)
        let writers = Reliability.size(ci: 4, heavy: 6)
        let maximumRounds = requiredKills * 3 / writers + 10
        var random = SeededRandom(seed: seed)
        let directory = TemporaryDirectory("truce-crash-concurrent")
        let store = try Reliability.makeStore(in: directory, named: "store")
        // A store saves through its log unless told otherwise: set both ways, so each run says what it tests.
        _ = try git(["-C", store, "config", "truce.saveLog", saveLog ? "true" : "false"])
        var acknowledged: [String: [String]] = [:]
        var landedFromLog = 0
        let started = Date()

        var durations = Durations()
        var problems: [String] = []
        var round = 0, kills = 0, finished = 0, slowestNextSave: TimeInterval = 0, staleLockWaits = 0, roundsWithTraces = 0
        // Round 0 kills no one: it measures how long concurrent saves take, so that later kills land anywhere in one.
        while kills < requiredKills && round < maximumRounds && problems.count < 5 {
            defer { round += 1 }
            var runs: [(process: BackgroundProcess, document: String, operation: Operation, delay: TimeInterval)] = []
            for writer in 0..<writers {
                let document = random.chance(50) ? random.pick(Self.documents) : "writers/\(writer)/\(random.int(0...3)).txt"
                let base = random.chance(30) ? acknowledged[document].map { random.pick($0) } : nil
                let operation = base == nil ? Operation.save : .saveFromBase
                let delay = round == 0 ? .infinity : durations.delay(for: operation, random: &random)
                let process = try BackgroundProcess(
                    ["save", document, "-", "--device", "writer\(writer)"] + (base.map { ["--base", $0] } ?? []), store: store,
                    input: Self.content(&random, iteration: round, lines: 20), environment: saveLog ? ["TRUCE_TEST_SAVE_LOG": "1"] : [:])
                runs.append((process, document, operation, delay))
            }
            var sent = Array(repeating: false, count: runs.count)
            for index in runs.indices.sorted(by: { runs[$0].delay < runs[$1].delay }) where runs[index].delay.isFinite {
                let wait = runs[index].delay - Date().timeIntervalSince(runs[index].process.started)
                if wait > 0 { usleep(UInt32(wait * 1_000_000)) }
                sent[index] = runs[index].process.kill()
            }
            for (index, run) in runs.enumerated() {
                let ending = run.process.wait()
                let kill = run.delay.isFinite ? "killed after \(Int(run.delay * 1000)) ms" : "not killed"
                let context = "round \(round), writer \(index): \(run.operation.rawValue) \(run.document), \(kill), seed \(seed)"
                // An id printed is a save that returned, so it is acknowledged even if the kill came before the exit.
                if let id = Reliability.savedID(ending.output) { acknowledged[run.document, default: []].append(id) }
                if ending.overran {
                    problems.append("\(context): still running a minute after it was started")
                } else if ending.killed && !(sent[index] && ending.status == SIGKILL) {
                    problems.append("\(context): died of signal \(ending.status) without being killed: \(ending.errorOutput)")
                } else if ending.killed {
                    kills += 1
                    durations.killed(run.operation, after: run.delay)
                } else {
                    finished += 1
                    durations.finished(run.operation, after: ending.seconds)
                    if ending.status == 0 && Reliability.savedID(ending.output) == nil {
                        problems.append("\(context): exit 0 without an id: \(ending.output)")
                    } else if ending.status != 0 && !Reliability.isBusy(status: ending.status, errorLines: ending.errorLines) {
                        problems.append("\(context): finished with exit \(ending.status): \(ending.errorOutput)")
                    }
                }
            }

            let context = "after round \(round) (\(kills) kills so far, seed \(seed))"
            if !Reliability.interruptedWriteTraces(in: store).isEmpty { roundsWithTraces += 1 }
            // The next writer must not be blocked by what the dead ones left; it lands what the save log holds first
            // (reading does not: a read serves the log's saves from the log).
            let landedBefore = try Reliability.reachableVersions(in: store)
            let next = random.pick(Self.documents)
            let clock = Date()
            let result = try truce(
                ["save", next, "-", "--device", "next"], store: store, input: Self.content(&random, iteration: round, lines: 20),
                environment: saveLog ? ["TRUCE_TEST_SAVE_LOG": "1"] : [:])
            let seconds = Date().timeIntervalSince(clock)
            slowestNextSave = max(slowestNextSave, seconds)
            if seconds > 1 { staleLockWaits += 1 }
            if result.status != 0 || seconds >= Self.nextWriterBound {
                problems.append("\(context): the next save exited \(result.status) after \(String(format: "%.1f", seconds)) s: \(result.errorOutput)")
            }
            let nextID = Reliability.savedID(result.output)
            if saveLog {
                landedFromLog += try Reliability.reachableVersions(in: store).subtracting(landedBefore).subtracting([nextID].compactMap { $0 }).count
            }
            let fsck = try Reliability.fsckProblems(store)
            if !fsck.isEmpty { problems.append("\(context): git fsck --strict: \(fsck.prefix(5).joined(separator: " | "))") }
            let lost = try Reliability.lostVersions(Set(acknowledged.values.joined()), in: store)
            if !lost.isEmpty { problems.append("\(context): lost acknowledged versions \(lost)") }
            if let nextID { acknowledged[next, default: []].append(nextID) }
        }

        #expect(problems.isEmpty, "\(problems.count) problems (seed \(seed)):\n\(problems.joined(separator: "\n"))")
        #expect(kills >= requiredKills, "only \(kills) saves were killed before they finished in \(round) rounds (seed \(seed))")
        // Objects no head reaches are saves killed after they wrote something: proof that kills landed mid-save, not only at start-up.
        let dangling = try git(["-C", store, "fsck", "--dangling", "--no-progress", "--connectivity-only"]).output
            .split(separator: "\n").filter { $0.hasPrefix("dangling ") }.count
        if saveLog {
            #expect(landedFromLog > 0, "no kill landed between a save's record and its checkpoint (seed \(seed))")
        } else {
            // A kill inside a save leaves an object no head reaches, or a lock or temporary file the next writer clears.
            #expect(dangling + roundsWithTraces > 0, "no kill landed inside a save (seed \(seed))")
        }
        // Every acknowledged save is in the journal too, once a prune has repaired what a kill left half-written.
        let prune = try truce(["prune"], store: store)
        #expect(prune.status == 0, "prune after the loop: \(prune.errorOutput)")
        #expect(try Reliability.fsckProblems(store).isEmpty)
        let acknowledgedIDs = Set(acknowledged.values.joined())
        #expect(try Reliability.lostVersions(acknowledgedIDs, in: store).isEmpty)
        let unjournaled = acknowledgedIDs.subtracting(try Reliability.journaledVersions(in: store))
        #expect(unjournaled.isEmpty, "truce changes lacks acknowledged versions \(unjournaled.sorted()) (seed \(seed))")
        print(
            "reliability: concurrent crash\(saveLog ? " (save log)" : "") \(round) rounds of \(writers) saves: \(kills) killed, \(finished) finished first, "
                + "\(landedFromLog) landed from the log, "
                + "\(acknowledgedIDs.count) acknowledged, \(dangling) dangling objects, \(roundsWithTraces) rounds left locks or temporary files, \(staleLockWaits) next saves waited for a stale lock, slowest \(String(format: "%.1f", slowestNextSave)) s, "
                + String(format: "%.1f s", Date().timeIntervalSince(started)))
    }

    /// The command line of `operation` and the stores it writes.
    static func arguments(
        for operation: Operation, document: String, store: Int, replicas: Replicas,
        random: inout SeededRandom
    ) -> ([String], [Int]) {
        switch operation {
        case .save:
            return (["save", document, "-", "--device", "crash"], [store])
        case .saveFromBase:
            let base = replicas.acknowledged[store][document].map { random.pick($0) }
            return (["save", document, "-", "--device", "crash"] + (base.map { ["--base", $0] } ?? []), [store])
        case .resolve:
            let resolver = document.hasSuffix(".md") ? [] : ["--resolver", "overwrite-with-current"]
            return (["resolve", document, "--device", "crash"] + resolver, [store])
        case .sync:
            return (["sync", replicas.paths[1 - store]], [0, 1])
        case .prune:
            return (["prune", "--now"], [store])
        }
    }

    /// Records what a process that finished with exit 0 acknowledged.
    static func acknowledge(
        _ ending: BackgroundProcess.Ending, of operation: Operation, document: String, store: Int,
        replicas: inout Replicas
    ) throws {
        switch operation {
        case .save, .saveFromBase:
            replicas.acknowledge(try #require(Reliability.savedID(ending.output), "save printed \(ending.output)"), of: document, in: store)
        case .resolve where ending.output.hasPrefix("nothing to resolve"):
            break
        case .resolve:
            // A document in no conflict: resolve says so, exit 0, and writes nothing.
            if ending.output.hasPrefix("nothing to resolve: \(document) ") { return }
            replicas.acknowledge(try #require(Reliability.resolutionID(ending.output), "resolve printed \(ending.output)"), of: document, in: store)
        case .sync:
            replicas.synced()
        case .prune:
            break
        }
    }

    /// The exits other than 0 that are not a failure: a conflict that needs a person, a busy store.
    static func isAllowedFailure(_ ending: BackgroundProcess.Ending, of operation: Operation, document: String) -> Bool {
        if Reliability.isBusy(status: ending.status, errorLines: ending.errorLines) { return true }
        return operation == .resolve && ending.status == 1
    }
}
