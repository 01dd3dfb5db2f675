import Foundation
import TestSupport
import Testing

/// Eight `truce save` processes, resolvers and a prune on one store at once: nothing acknowledged is lost.
///
/// Writers 0 and 1 save the two shared documents from their first version
/// (every save a new conflict version), writers 2 and 3 save them from the
/// current version, writers 4 to 7 save sixteen other documents, a quarter of
/// the time from the first version. Meanwhile one task resolves (with
/// `overwrite-with-current` for `.txt`, with the three-way merge `*.md` gets
/// from `info/attributes`, answering as a person with `--content` when that
/// merge needs one) and another runs `truce prune` with the default grace
/// period, over and over. Afterwards every version a `save` or `resolve`
/// acknowledged (exit 0 and an id) is reachable from a head, is in
/// `truce log` and in `truce changes`, `git fsck --strict` is clean, and the
/// resolver's last pass, after the writers, left no document in conflict. The
/// only failure a writer may meet is "the store is busy" (exit 3), which it
/// would retry; those saves are counted and are not acknowledged.
@Suite(.timeLimit(.minutes(20)), .serialized) struct ReliabilityConcurrencyTests {
    static let writers = 8
    static let sharedDocuments = ["shared.txt", "shared.md"]
    static let otherDocuments = (0..<16).map { "many/\($0).\($0 % 4 == 0 ? "md" : "txt")" }

    /// What one background task saw.
    struct Outcome: Sendable {
        var isWriter = false
        var acknowledged: [String: Set<String>] = [:]
        var saves = 0
        /// The ids of the writers' acknowledged saves, and how many each writer had.
        var savedIDs: Set<String> = []
        var savesByWriter: [Int: Int] = [:]
        /// Saves that failed as busy (the retriable error), and resolves or prunes that did.
        var busy = 0
        var busyOthers = 0
        var resolutions = 0
        var needsPerson = 0
        var prunes = 0
        var unexpected: [String] = []

        mutating func merge(_ other: Outcome) {
            acknowledged.merge(other.acknowledged) { $0.union($1) }
            saves += other.saves
            savedIDs.formUnion(other.savedIDs)
            savesByWriter.merge(other.savesByWriter) { $0 + $1 }
            busy += other.busy
            busyOthers += other.busyOthers
            resolutions += other.resolutions
            needsPerson += other.needsPerson
            prunes += other.prunes
            unexpected += other.unexpected
        }
    }

    /// Eight lines; writer `writer` changes line `writer % 8`, so different writers merge cleanly and one writer's siblings conflict.
    static func content(writer: Int, save: Int) -> Data {
        Data((0..<8).map { $0 == writer % 8 ? "line \($0) by writer \(writer), save \(save)\n" : "line \($0)\n" }.joined().utf8)
    }

    @Test func savesResolvesAndAPruneAtOnceLoseNothing() async throws {
        let seed = Reliability.seed(0xC0_4C_0E_E7, for: "concurrency")
        let savesPerWriter = Reliability.size(ci: 25, heavy: 200)
        let directory = TemporaryDirectory("truce-reliability")
        let store = try Reliability.makeStore(in: directory, named: "store")
        let started = Date()

        var made: [String: String] = [:]
        var setup = Outcome()
        for document in Self.sharedDocuments + Self.otherDocuments {
            let result = try truce(["save", document, "-", "--device", "setup"], store: store, input: Self.content(writer: 99, save: 0))
            let id = try #require(Reliability.savedID(result.output), "setup save of \(document): \(result.errorOutput)")
            made[document] = id
            setup.acknowledged[document, default: []].insert(id)
        }

        let firstVersions = made
        let writersDone = ReliabilityFlag()
        let outcome = try await withThrowingTaskGroup(of: Outcome.self) { group in
            for writer in 0..<Self.writers {
                group.addTask {
                    var random = SeededRandom(seed: seed &+ UInt64(writer))
                    var outcome = Outcome(isWriter: true)
                    for save in 0..<savesPerWriter {
                        let document: String
                        var arguments: [String] = []
                        switch writer {
                        case 0, 1:
                            document = Self.sharedDocuments[save % 2]
                            arguments = ["--base", firstVersions[document]!]
                        case 2, 3:
                            document = Self.sharedDocuments[save % 2]
                        default:
                            document = random.pick(Self.otherDocuments)
                            if random.chance(25) { arguments = ["--base", firstVersions[document]!] }
                        }
                        let result = try await runAsync(
                            truceExecutable, ["--store", store, "save", document, "-", "--device", "w\(writer)"] + arguments,
                            input: Self.content(writer: writer, save: save))
                        if result.status == 0, let id = Reliability.savedID(result.output) {
                            outcome.acknowledged[document, default: []].insert(id)
                            outcome.saves += 1
                            outcome.savedIDs.insert(id)
                            outcome.savesByWriter[writer, default: 0] += 1
                        } else if Reliability.isBusy(status: result.status, errorLines: result.errorLines) {
                            outcome.busy += 1
                        } else {
                            outcome.unexpected.append(
                                "writer \(writer) save \(save) of \(document): exit \(result.status), stdout \(result.output.debugDescription), stderr \(result.errorOutput.debugDescription)"
                            )
                        }
                    }
                    return outcome
                }
            }
            group.addTask {
                var random = SeededRandom(seed: seed &+ 100)
                var outcome = Outcome()
                var last = false
                while !last {
                    last = writersDone.isRaised
                    // Once the writers are done, one more pass settles what they left.
                    let documents = last ? Self.sharedDocuments + Self.otherDocuments : Self.sharedDocuments + [random.pick(Self.otherDocuments)]
                    for document in documents {
                        let resolver = document.hasSuffix(".md") ? [] : ["--resolver", "overwrite-with-current"]
                        var arguments = ["--store", store, "resolve", document, "--device", "resolver"] + resolver
                        var input = Data()
                        var answered = false
                        while true {
                            let result = try await runAsync(truceExecutable, arguments, input: input)
                            switch result.status {
                            case 0 where result.output.hasPrefix("nothing to resolve: \(document) "):
                                break
                            case 0:
                                guard let id = Reliability.resolutionID(result.output) else {
                                    outcome.unexpected.append("resolve \(document) printed no id: \(result.output.debugDescription)")
                                    break
                                }
                                outcome.acknowledged[document, default: []].insert(id)
                                outcome.resolutions += 1
                            case 1 where !answered:
                                // Overlapping edits: a person answers with a whole file, or conflict versions would pile up.
                                outcome.needsPerson += 1
                                arguments = ["--store", store, "resolve", document, "--content", "-", "--device", "person"]
                                input = Self.content(writer: 0, save: -1)
                                answered = true
                                continue
                            default:
                                if Reliability.isBusy(status: result.status, errorLines: result.errorLines) {
                                    outcome.busyOthers += 1
                                } else {
                                    outcome.unexpected.append(
                                        "\(arguments.dropFirst(2).joined(separator: " ")): exit \(result.status), stderr \(result.errorOutput.debugDescription)"
                                    )
                                }
                            }
                            break
                        }
                    }
                }
                return outcome
            }
            group.addTask {
                var outcome = Outcome()
                var last = false
                while !last {
                    last = writersDone.isRaised
                    // The default grace period: safe beside live writers, unlike --now.
                    let result = try await runAsync(truceExecutable, ["--store", store, "prune"])
                    if result.status == 0 {
                        outcome.prunes += 1
                    } else if Reliability.isBusy(status: result.status, errorLines: result.errorLines) {
                        outcome.busyOthers += 1
                    } else {
                        outcome.unexpected.append("prune: exit \(result.status), stderr \(result.errorOutput.debugDescription)")
                    }
                    try await Task.sleep(for: .milliseconds(100))
                }
                return outcome
            }
            var total = setup
            var writersLeft = Self.writers
            while let outcome = try await group.next() {
                total.merge(outcome)
                // The resolver and the prune loop until the last writer is done.
                if outcome.isWriter {
                    writersLeft -= 1
                    if writersLeft == 0 { writersDone.raise() }
                }
            }
            return total
        }

        let context = "seed \(seed)"
        #expect(
            outcome.unexpected.isEmpty,
            "\(outcome.unexpected.count) unexpected failures (\(context)):\n\(outcome.unexpected.prefix(10).joined(separator: "\n"))")
        let acknowledged = outcome.acknowledged.values.reduce(into: Set<String>()) { $0.formUnion($1) }
        #expect(outcome.saves + outcome.busy == Self.writers * savesPerWriter, "every save is acknowledged or busy (\(context))")
        // Busy is allowed, not all there is: every writer got saves through, and each acknowledged save is one
        // version the store holds, as many as the writers' versions found there (no busy save landed unannounced).
        let unacknowledgedWriters = (0..<Self.writers).filter { outcome.savesByWriter[$0, default: 0] == 0 }
        #expect(unacknowledgedWriters.isEmpty, "writers \(unacknowledgedWriters) had no save acknowledged (\(context))")
        #expect(outcome.savedIDs.count == outcome.saves, "\(outcome.saves) acknowledged saves printed \(outcome.savedIDs.count) ids (\(context))")
        let found = try Reliability.versions(byAuthors: Set((0..<Self.writers).map { "w\($0)" }), in: store)
        #expect(
            found.count == outcome.saves && found == outcome.savedIDs,
            "\(outcome.saves) saves acknowledged, \(found.count) writers' versions in the store (\(context))")

        let lost = try Reliability.lostVersions(acknowledged, in: store)
        #expect(lost.isEmpty, "\(lost.count) acknowledged versions no head reaches (\(context)): \(lost.prefix(10))")
        let fsck = try Reliability.fsckProblems(store)
        #expect(fsck.isEmpty, "git fsck --strict (\(context)):\n\(fsck.prefix(20).joined(separator: "\n"))")
        for (document, ids) in outcome.acknowledged {
            let log = try truce(["log", document, "--json"], store: store)
            let history = try #require(JSONSerialization.jsonObject(with: log.stdout) as? [[String: Any]], "log \(document): \(log.errorOutput)")
            let missing = ids.subtracting(history.compactMap { $0["id"] as? String })
            #expect(missing.isEmpty, "truce log \(document) lacks \(missing.count) acknowledged versions (\(context))")
        }
        let unjournaled = acknowledged.subtracting(try Reliability.journaledVersions(in: store))
        #expect(unjournaled.isEmpty, "truce changes lacks \(unjournaled.count) acknowledged versions (\(context))")

        let status = try truce(["status", "--json"], store: store)
        let inConflict = (try JSONSerialization.jsonObject(with: status.stdout) as? [String: Any])?["inConflict"] as? [[String: Any]]
        #expect(inConflict?.isEmpty == true, "after the last resolver pass: \(status.output) \(status.errorOutput) (\(context))")

        // The run must have done what it claims: conflicts made and settled while a prune ran.
        #expect(outcome.resolutions > 0)
        #expect(outcome.prunes > 0)
        print(
            "reliability: concurrency \(Self.writers)x\(savesPerWriter) saves: \(outcome.saves) acknowledged, \(outcome.busy) busy (and \(outcome.busyOthers) busy resolves or prunes), "
                + "\(outcome.resolutions) resolutions, \(outcome.needsPerson) needing a person, \(outcome.prunes) prunes, "
                + String(format: "%.1f s", Date().timeIntervalSince(started)))
    }
}
