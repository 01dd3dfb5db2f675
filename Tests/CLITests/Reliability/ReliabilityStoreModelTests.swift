import Foundation
import TestSupport
import Testing

/// A random sequence of store operations on two replicas, each checked against a small model of heads.
///
/// The model knows only the product's definitions: a document's heads are the
/// versions no other version of it descends from, and heads with the same
/// content count as one; the current version is the head with the latest
/// author date, then the larger id; a save is dated its `--date`, or one second past its parents' dates and the newest
/// date of any version the store adopted by sync when that is later (hybrid dates); a save based on a head descends from every
/// head with that head's content; a resolution's parents are every head,
/// current first; `reopen` writes one child of the newest resolution per
/// parent, restoring that parent's content; `sync` unions heads; `prune --now`
/// drops documents whose only head is a deletion and keeps only what the
/// remaining heads reach. Saves and deletions use a few fixed
/// dates so that ties between dates (and the id tie-break) happen often, and
/// bases are drawn from every version the store holds, heads or not.
@Suite(.timeLimit(.minutes(20)), .serialized) struct ReliabilityStoreModelTests {
    static let documents = ["a.txt", "notes/b.md", "c", "d/e/f.txt"]
    static let dates = ["2026-01-01T10:00:00Z", "2026-01-01T10:00:01Z", "2026-01-01T10:00:02Z"]

    /// What the model knows of one version.
    struct ModelVersion {
        let id: String
        let document: String
        let parents: [String]
        let date: Int
        /// nil for a deletion.
        let content: Data?
        let isResolution: Bool
    }

    /// One replica as the model sees it.
    struct ModelStore {
        let path: String
        /// The head set of each document.
        var heads: [String: Set<String>] = [:]
        /// Every version whose commit is in this store's object database.
        var objects: Set<String> = []
        /// The newest author date among the versions this store adopted by sync: its saves are dated after it.
        var newestAdopted: Int?
    }

    /// Both replicas and every version either ever made.
    struct Model {
        var stores: [ModelStore]
        var versions: [String: ModelVersion] = [:]
        /// Every version id in the order the model first saw it: choices made by position, not by id, so that
        /// a seed replays the same sequence of choices although ids (which hold commit times) differ between runs.
        var order: [String] = []

        func isAncestor(_ ancestor: String, of descendant: String) -> Bool {
            var queue = versions[descendant]?.parents ?? []
            var seen = Set<String>()
            while let next = queue.popLast() {
                if next == ancestor { return true }
                if seen.insert(next).inserted { queue += versions[next]?.parents ?? [] }
            }
            return false
        }

        /// The candidates no other candidate descends from.
        func independent(_ candidates: Set<String>) -> Set<String> {
            candidates.filter { candidate in !candidates.contains { $0 != candidate && isAncestor(candidate, of: $0) } }
        }

        /// The current-version rule: latest author date, then the larger id.
        func current(of heads: Set<String>) -> ModelVersion? {
            heads.compactMap { versions[$0] }.max { ($0.date, $0.id) < ($1.date, $1.id) }
        }

        /// The heads with distinct content, most current first: the current version, then the conflict versions.
        func distinct(_ heads: Set<String>) -> [ModelVersion] {
            var seen: [Data?] = []
            return heads.compactMap { versions[$0] }.sorted { ($0.date, $0.id) > ($1.date, $1.id) }.filter { version in
                if seen.contains(version.content) { return false }
                seen.append(version.content)
                return true
            }
        }

        /// `ids` and everything they descend from.
        func closure(_ ids: some Sequence<String>) -> Set<String> {
            var seen = Set<String>()
            var queue = Array(ids)
            while let next = queue.popLast() {
                guard seen.insert(next).inserted else { continue }
                queue += versions[next]?.parents ?? []
            }
            return seen
        }

        mutating func add(_ version: ModelVersion, to store: Int) {
            if versions.updateValue(version, forKey: version.id) == nil { order.append(version.id) }
            stores[store].objects.insert(version.id)
            stores[store].heads[version.document] = independent(stores[store].heads[version.document, default: []].union([version.id]))
        }
    }

    /// With `saveLog`, both stores save through their save logs: every command but `save` lands them in git first.
    @Test(arguments: [false, true]) func randomOperationsMatchAModelOfHeads(saveLog: Bool) throws {
        let seed = Reliability.seed(saveLog ? 0x5707_E30E : 0x5707_E30D, for: saveLog ? "store model, save log" : "store model")
        let steps = Reliability.size(ci: 200, heavy: 2000)
        var random = SeededRandom(seed: seed)
        let directory = TemporaryDirectory("truce-model")
        var model = Model(stores: [
            ModelStore(path: try Reliability.makeStore(in: directory, named: "a")),
            ModelStore(path: try Reliability.makeStore(in: directory, named: "b")),
        ])
        // A store saves through its log unless told otherwise: set both ways, so each run says what it tests.
        for store in model.stores { _ = try git(["-C", store.path, "config", "truce.saveLog", saveLog ? "true" : "false"]) }
        var problems: [String] = []
        var counts: [String: Int] = [:]
        let started = Date()

        for step in 0..<steps where problems.isEmpty {
            let store = random.int(0...1)
            let roll = random.int(0...99)
            // Resolve and reopen mostly go where they have something to do, so that both happen often.
            let heads = model.stores[store].heads
            let preferred =
                switch roll {
                case 55..<72: Self.documents.filter { model.distinct(heads[$0, default: []]).count > 1 }
                case 72..<82: Self.documents.filter { heads[$0, default: []].contains { model.versions[$0]?.isResolution == true } }
                default: [String]()
                }
            let document = !preferred.isEmpty && random.chance(90) ? random.pick(preferred) : random.pick(Self.documents)
            let context = "step \(step), store \(store), \(document), seed \(seed)"
            var touched = [(store, document)]
            switch roll {
            case 0..<55:
                let isDeletion = roll >= 45
                let operation = isDeletion ? "delete" : "save"
                let known = model.order.filter { model.stores[store].objects.contains($0) && model.versions[$0]?.document == document }
                let base = !known.isEmpty && random.chance(40) ? random.pick(known) : nil
                let date = random.pick(Self.dates)
                let device = random.pick(["laptop", "phone"])
                let content = Data("\(random.pick(["x", "y", "z"])) \(random.int(0...3))\n".utf8)
                var words = [operation, document] + (isDeletion ? [] : ["-"]) + ["--device", device, "--date", date]
                if let base { words += ["--base", base] }
                // Through the log when asked: a command saves straight into git unless the test says otherwise.
                let result = try truce(
                    words, store: model.stores[store].path, input: content, environment: saveLog ? ["TRUCE_TEST_SAVE_LOG": "1"] : [:])
                let parent = base ?? model.current(of: model.stores[store].heads[document, default: []])?.id
                let parentIsDeletion = parent.map { model.versions[$0]?.content == nil } ?? true
                if isDeletion && parentIsDeletion {
                    if result.status != 2 || result.errorLines.count != 1 {
                        problems.append("\(context): delete on \(parent ?? "nothing") exited \(result.status): \(result.errorOutput)")
                    }
                    counts["delete refused", default: 0] += 1
                    break
                }
                guard result.status == 0, let id = Reliability.savedID(result.output) else {
                    problems.append("\(context): \(words.joined(separator: " ")) exited \(result.status): \(result.errorOutput)")
                    break
                }
                let seconds = Int(ISO8601DateFormatter().date(from: date)!.timeIntervalSince1970)
                // A save based on a head supersedes every head holding the same content.
                let documentHeads = model.stores[store].heads[document, default: []]
                var parents = parent.map { [$0] } ?? []
                if let parent, documentHeads.contains(parent) {
                    parents += documentHeads.filter { $0 != parent && model.versions[$0]?.content == model.versions[parent]?.content }
                }
                let written = try Self.readVersion(id, of: document, in: model.stores[store].path)
                if Set(written.parents) != Set(parents) || written.parents.first != parents.first {
                    problems.append(
                        "\(context): \(words.joined(separator: " ")) wrote \(id) with parents \(written.parents); the model expects \(parents)")
                }
                let seen = (parents.compactMap { model.versions[$0]?.date } + [model.stores[store].newestAdopted].compactMap { $0 }).max()
                let dated = max(seconds, seen.map { $0 + 1 } ?? seconds)
                if written.date != dated {
                    problems.append("\(context): \(words.joined(separator: " ")) dated \(id) \(written.date); the model expects \(dated)")
                }
                model.add(
                    ModelVersion(
                        id: id, document: document, parents: written.parents, date: dated,
                        content: isDeletion ? nil : content, isResolution: false), to: store)
                counts[base == nil ? operation : operation + " --base", default: 0] += 1
            case 55..<72:
                let heads = model.stores[store].heads[document, default: []]
                let result = try truce(
                    ["resolve", document, "--resolver", "overwrite-with-current", "--device", "resolver"],
                    store: model.stores[store].path)
                guard model.distinct(heads).count > 1 else {
                    // No conflict: an absent document is bad input; one head is nothing to resolve; equal heads merge
                    // into one version (identical-content), as resolve --all merges them.
                    if heads.isEmpty {
                        if result.status != 2 || result.errorLines.count != 1 {
                            problems.append("\(context): resolve of an absent document exited \(result.status): \(result.errorOutput)")
                        }
                        counts["resolve refused", default: 0] += 1
                    } else if heads.count == 1 {
                        if result.status != 0 || !result.output.hasPrefix("nothing to resolve: \(document) ") || !result.errorLines.isEmpty {
                            problems.append(
                                "\(context): resolve of a settled document exited \(result.status): \(result.output) \(result.errorOutput)")
                        }
                        counts["resolve settled", default: 0] += 1
                    } else {
                        guard result.status == 0, let id = Reliability.resolutionID(result.output), result.output.contains("identical-content") else {
                            problems.append(
                                "\(context): resolve of \(heads.count) equal heads exited \(result.status): \(result.output) \(result.errorOutput)")
                            break
                        }
                        let current = model.current(of: heads)!
                        let written = try Self.readVersion(id, of: document, in: model.stores[store].path)
                        if written.parents.first != current.id || Set(written.parents) != heads || written.content != current.content {
                            problems.append("\(context): identical-content resolution \(id) has parents \(written.parents), heads \(heads.sorted())")
                        }
                        model.add(written, to: store)
                        counts["resolve equal heads", default: 0] += 1
                    }
                    break
                }
                guard result.status == 0, let id = Reliability.resolutionID(result.output) else {
                    problems.append("\(context): resolve exited \(result.status): \(result.output) \(result.errorOutput)")
                    break
                }
                let current = model.current(of: heads)!
                let written = try Self.readVersion(id, of: document, in: model.stores[store].path)
                if written.parents.first != current.id || Set(written.parents) != heads || written.parents.count != heads.count {
                    problems.append(
                        "\(context): resolution \(id) has parents \(written.parents); the model's heads are \(heads.sorted()), current \(current.id)")
                }
                // With no deletion among the heads, overwrite-with-current keeps the current version's bytes.
                if heads.allSatisfy({ model.versions[$0]?.content != nil }), written.content != current.content {
                    problems.append(
                        "\(context): resolution \(id) holds \(written.content?.escaped ?? "a deletion"), current was \(current.content?.escaped ?? "-")"
                    )
                }
                model.add(written, to: store)
                counts["resolve", default: 0] += 1
            case 72..<82:
                let heads = model.stores[store].heads[document, default: []]
                let resolution = model.current(of: heads.filter { model.versions[$0]?.isResolution == true })
                let result = try truce(["reopen", document], store: model.stores[store].path)
                guard let resolution else {
                    if result.status != 2 || result.errorLines.count != 1 {
                        problems.append("\(context): reopen without a resolution exited \(result.status): \(result.errorOutput)")
                    }
                    counts["reopen refused", default: 0] += 1
                    break
                }
                if result.status != 0 { problems.append("\(context): reopen exited \(result.status): \(result.errorOutput)") }
                // Each parent comes back as a reopening: a child of the resolution with the parent's content and date.
                let reopenings = try Self.children(of: resolution.id, in: model.stores[store].path)
                if reopenings.isEmpty || reopenings.count > resolution.parents.count {
                    problems.append("\(context): reopen of \(resolution.id) wrote \(reopenings.count) heads for \(resolution.parents.count) parents")
                }
                for id in reopenings {
                    let written = try Self.readVersion(id, of: document, in: model.stores[store].path)
                    let restored = try git(["-C", model.stores[store].path, "log", "-1", "--format=%(trailers:key=Restores,valueonly)", id]).output
                        .trimmingCharacters(in: .whitespacesAndNewlines)
                    if let original = model.versions[restored], resolution.parents.contains(restored), original.content == written.content,
                        original.date == written.date
                    {
                        model.add(
                            ModelVersion(
                                id: id, document: document, parents: written.parents, date: written.date,
                                content: written.content, isResolution: false), to: store)
                    } else {
                        problems.append("\(context): reopening \(id) restores \(restored), which the model does not match")
                    }
                }
                counts["reopen", default: 0] += 1
            case 82..<94:
                let other = 1 - store
                let result = try truce(["sync", model.stores[other].path], store: model.stores[store].path)
                if result.status != 0 { problems.append("\(context): sync exited \(result.status): \(result.errorOutput)") }
                let reachedBefore = model.stores.map { model.closure($0.heads.values.joined()) }
                for key in Self.documents {
                    let union = model.independent(model.stores[0].heads[key, default: []].union(model.stores[1].heads[key, default: []]))
                    for index in 0...1 where !union.isEmpty { model.stores[index].heads[key] = union }
                }
                // Each side adopts what its heads did not reach, and dates its next saves after the newest of it.
                for index in 0...1 {
                    let adopted = model.closure(model.stores[index].heads.values.joined()).subtracting(reachedBefore[index])
                    let newest = (adopted.compactMap { model.versions[$0]?.date } + [model.stores[index].newestAdopted].compactMap { $0 }).max()
                    model.stores[index].newestAdopted = newest
                }
                let reached = model.closure(model.stores[0].heads.values.joined())
                for index in 0...1 { model.stores[index].objects.formUnion(reached) }
                touched = Self.documents.flatMap { [(0, $0), (1, $0)] }
                counts["sync", default: 0] += 1
            default:
                let now = random.chance(50)
                let result = try truce(["prune"] + (now ? ["--now"] : []), store: model.stores[store].path)
                if result.status != 0 { problems.append("\(context): prune exited \(result.status): \(result.errorOutput)") }
                if now {
                    // With no grace period a document whose only head is a deletion is dropped: its refs go.
                    for (key, heads) in model.stores[store].heads
                    where model.distinct(heads).count == 1 && model.versions[heads.first!]?.content == nil {
                        model.stores[store].heads[key] = []
                    }
                    model.stores[store].objects = model.closure(model.stores[store].heads.values.joined())
                }
                touched = Self.documents.map { (store, $0) }
                counts[now ? "prune --now" : "prune", default: 0] += 1
            }
            if !problems.isEmpty { break }
            let full = step % 20 == 19 || step == steps - 1
            if full { touched = Self.documents.flatMap { [(0, $0), (1, $0)] } }
            for (index, key) in touched {
                problems += try Self.check(key, in: model.stores[index], model: model, withContent: full).map { "\(context): store \(index): \($0)" }
            }
            if full {
                for index in 0...1 {
                    problems += try Self.checkStatus(model.stores[index], model: model).map { "\(context): store \(index): \($0)" }
                    problems += try Reliability.fsckProblems(model.stores[index].path).map { "\(context): store \(index): fsck: \($0)" }
                }
            }
        }

        #expect(problems.isEmpty, "seed \(seed):\n\(problems.prefix(10).joined(separator: "\n"))")
        // The saves went through the logs at all (a save log is made by the first logged save), or the variant proved nothing new.
        for store in model.stores {
            #expect(
                FileManager.default.fileExists(atPath: store.path + "/truce-saves.log") == saveLog, "\(store.path): save log present ≠ \(saveLog)")
        }
        // The sequence must have reached every kind of operation and real conflicts.
        for operation in ["save", "save --base", "delete", "resolve", "reopen", "sync", "prune --now", "prune"] {
            #expect(counts[operation, default: 0] > 0, "no \(operation) ran (seed \(seed))")
        }
        print(
            "reliability: store model\(saveLog ? " (save log)" : "") \(steps) steps: \(counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")), "
                + String(format: "%.1f s", Date().timeIntervalSince(started)))
    }

    /// Compares `truce versions` (and, with `withContent`, `truce cat`) of one document with the model.
    static func check(_ document: String, in store: ModelStore, model: Model, withContent: Bool) throws -> [String] {
        let heads = store.heads[document, default: []]
        let result = try truce(["versions", document, "--json"], store: store.path)
        guard let expected = model.current(of: heads) else {
            return result.status == 2 ? [] : ["\(document) has no version in the model, but versions exited \(result.status)"]
        }
        guard result.status == 0, let json = try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any] else {
            return ["versions \(document) exited \(result.status): \(result.errorOutput)"]
        }
        let current = (json["current"] as? [String: Any])?["id"] as? String
        let conflicts = Set((json["conflicts"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String })
        let distinct = model.distinct(heads)
        var problems: [String] = []
        if current != expected.id || conflicts != Set(distinct.dropFirst().map(\.id)) {
            problems.append(
                "\(document): truce says current \(current ?? "none"), conflicts \(conflicts.sorted()); the model says current \(expected.id), heads \(heads.sorted())"
            )
        }
        let state = distinct.count > 1 ? "inConflict" : expected.content == nil ? "deleted" : "settled"
        if json["state"] as? String != state { problems.append("\(document): state \(json["state"] ?? "none"), the model says \(state)") }
        if withContent, let content = expected.content {
            let cat = try truce(["cat", document], store: store.path)
            if cat.status != 0 || cat.stdout != content {
                problems.append("\(document): cat printed \(cat.stdout.escaped) (exit \(cat.status)), the model says \(content.escaped)")
            }
        }
        return problems
    }

    /// Compares `truce status --json` with the documents the model has in conflict.
    static func checkStatus(_ store: ModelStore, model: Model) throws -> [String] {
        let result = try truce(["status", "--json"], store: store.path)
        guard result.status == 0,
            let json = (try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])?["inConflict"] as? [[String: Any]]
        else {
            return ["status exited \(result.status): \(result.errorOutput) \(result.output)"]
        }
        let reported = Set(json.compactMap { $0["document"] as? String })
        let expected = Set(store.heads.filter { model.distinct($0.value).count > 1 }.keys)
        return reported == expected ? [] : ["status lists \(reported.sorted()) in conflict, the model \(expected.sorted())"]
    }

    /// The head versions of the store whose only parent is `parent`.
    static func children(of parent: String, in store: String) throws -> [String] {
        let heads = try git(["-C", store, "for-each-ref", "--format=%(objectname)", "refs/truce/heads/"]).output.split(separator: "\n").map(
            String.init)
        return try Set(heads).filter { try git(["-C", store, "log", "-1", "--format=%P", $0]).output == parent + "\n" }.sorted()
    }

    /// A version as git shows it: parents in order, author date, and the document's bytes (nil for a deletion).
    static func readVersion(_ id: String, of document: String, in store: String) throws -> ModelVersion {
        let header = try git(["-C", store, "show", "-s", "--format=%P%n%at", id]).output.split(separator: "\n", omittingEmptySubsequences: false)
        let blob = try git(["-C", store, "cat-file", "blob", "\(id):\(document)"])
        return ModelVersion(
            id: id, document: document, parents: header.first.map { $0.split(separator: " ").map(String.init) } ?? [],
            date: Int(header.count > 1 ? header[1] : "") ?? 0, content: blob.status == 0 ? blob.stdout : nil,
            isResolution: true)
    }
}
