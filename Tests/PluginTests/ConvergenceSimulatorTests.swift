import Foundation
import TestSupport
import Testing
import Truce

/// Many replicas that each resolve whatever they see after every sync, as every device of an iCloud app does.
///
/// Seeded random saves and pairwise syncs (both sides resolving after each),
/// then ring rounds once saves stop. Checked: every replica has one head per
/// document within two rounds, with the same id and bytes everywhere; the
/// round after that moves nothing; every acknowledged save is in the final
/// history; no two resolution commits settle the same set of heads, so
/// the number of resolutions is the number of distinct conflicts met; and
/// under field rules, a counter holds the sum of every save's increment.
@Suite(.timeLimit(.minutes(20))) struct ConvergenceSimulatorTests {
    enum Routing: String, CaseIterable, Sendable {
        case threeWay = "three-way"
        case overwriteWithCurrent = "overwrite-with-current"
        case lastWriterWinsByKey = "last-writer-wins by key"
        /// three-way falling back to list-conflicts; a person answers on whichever replica sees the conflict.
        case personAfterThreeWay = "three-way then a person"
        /// JSON merged by structure under field rules: a title by the latest edit, tags as a set, a counter, a maximum.
        case fieldRules = "field rules"

        var attributes: String {
            switch self {
            case .threeWay, .personAfterThreeWay: "*.txt merge=three-way\n"
            case .overwriteWithCurrent: "*.txt merge=overwrite-with-current\n"
            case .lastWriterWinsByKey: "*.json merge=last-writer-wins\n"
            case .fieldRules: "*.json merge=structured\n"
            }
        }

        var config: String? {
            switch self {
            case .personAfterThreeWay: "[resolver \"three-way\"]\n\tfallback = list-conflicts\n"
            case .lastWriterWinsByKey: "[resolver \"last-writer-wins\"]\n\tgranularity = key\n"
            default: nil
            }
        }

        /// The synced `.truce/fields`, when the routing has one.
        var fields: String? {
            self == .fieldRules ? "*.json /title lww\n*.json /tags union\n*.json /views counter\n*.json /top max\n" : nil
        }

        var documents: [DocumentKey] {
            switch self {
            case .lastWriterWinsByKey: ["settings.json", "notes/prefs.json"]
            case .fieldRules: ["note.json", "notes/two.json"]
            default: ["a.txt", "notes/b.txt", "c.txt"]
            }
        }
    }

    static let cases: [(Int, Routing)] = [3, 5, 10].flatMap { count in Routing.allCases.map { (count, $0) } }

    @Test(arguments: cases)
    func replicasThatResolveAfterEverySyncConverge(replicas count: Int, routing: Routing) async throws {
        let seed = UInt64(0xC0_4E46) &+ UInt64(count) &* 31 &+ UInt64(Routing.allCases.firstIndex(of: routing)!)
        var simulation = try Simulation(replicas: count, routing: routing, seed: seed)
        let context = "\(count) replicas, \(routing.rawValue), seed \(seed)"

        for _ in 0..<max(count * 6, 40) {
            if simulation.random.chance(60) {
                try simulation.save(on: simulation.random.int(0...count - 1))
            } else {
                let a = simulation.random.int(0...count - 1)
                try await simulation.sync(a, (a + 1 + simulation.random.int(0...count - 2)) % count)
            }
        }
        #expect(simulation.saved.count >= count * 2, "\(context): too few saves to mean anything (\(simulation.saved.count))")

        var roundsToConverge: Int?
        for round in 1...3 {
            let moved = try await simulation.ringRound()
            if roundsToConverge == nil, try simulation.divergence().isEmpty { roundsToConverge = round }
            if round == 3 { #expect(moved == 0, "\(context): the round after convergence still moved \(moved) version(s)") }
        }
        let left = try simulation.divergence()
        let rounds = try #require(roundsToConverge, "\(context): not converged after 3 rounds: \(left.prefix(3))")
        #expect(rounds <= 2, "\(context): converged only after \(rounds) rounds")

        // Nothing acknowledged was lost: every saved version is in the history every replica now has.
        for key in routing.documents {
            let history = Set(try simulation.stores[0].history(of: key).map(\.id))
            let lost = simulation.saved.filter { $0.key == key && !history.contains($0.id) }
            #expect(lost.isEmpty, "\(context): \(key) lost \(lost.count) saved version(s)")
        }
        // The counter rule adds up every replica's increments, whatever order the merges came in.
        for (key, total) in simulation.increments {
            let views = try JSONSerialization.jsonObject(with: try #require(try simulation.stores[0].contents(of: key))) as? [String: Any]
            #expect(views?["views"] as? Int == total, "\(context): \(key) counts \(views?["views"] ?? "nothing"), the saves added \(total)")
        }
        // Determinism: one resolution commit per distinct set of heads settled, however many replicas settled it.
        let resolutions = try simulation.resolutionCommits()
        let settledSets = Set(resolutions.map { "\($0.key) \($0.parents.map(\.hex).sorted())" })
        #expect(resolutions.count == settledSets.count, "\(context): \(resolutions.count) resolution commits for \(settledSets.count) conflicts")
        #expect(simulation.resolutionsWritten > 0, "\(context): no replica resolved anything")
        print(
            "convergence: \(context): \(simulation.saved.count) saves, \(resolutions.count) resolution commits "
                + "(\(simulation.resolutionsWritten) resolutions written by replicas), converged after \(rounds) round(s)")
    }
}

/// N replicas in temporary directories, with the routing synced from replica 0.
struct Simulation {
    let directory = TemporaryDirectory("truce-convergence")
    let routing: ConvergenceSimulatorTests.Routing
    var stores: [DocumentStore] = []
    var random: SeededRandom
    /// Every version a save acknowledged.
    var saved: [Version] = []
    /// Resolutions written by any replica (the same commit written on two replicas counts twice).
    var resolutionsWritten = 0
    /// Under field rules: every increment saved to each document's `views`, which the counter rule must add up.
    var increments: [DocumentKey: Int] = [:]
    private var clock = Date(timeIntervalSince1970: 1_796_000_000)

    init(replicas: Int, routing: ConvergenceSimulatorTests.Routing, seed: UInt64) throws {
        self.routing = routing
        random = SeededRandom(seed: seed)
        for index in 0..<replicas { stores.append(try DocumentStore.create(at: directory.file("r\(index)"))) }
        // Routing travels as data: replica 0 writes it, the first ring carries it to everyone.
        try stores[0].save(Data(routing.attributes.utf8), to: ".truce/attributes", device: "r0", date: clock)
        if let config = routing.config { try stores[0].save(Data(config.utf8), to: ".truce/config", device: "r0", date: clock) }
        if let fields = routing.fields { try stores[0].save(Data(fields.utf8), to: ".truce/fields", device: "r0", date: clock) }
        // Documents start on one replica: two devices creating the same document independently is an add/add
        // conflict with no base, which only a person settles.
        for key in routing.documents {
            let start =
                switch routing {
                case .lastWriterWinsByKey: Data("{}".utf8)
                case .fieldRules: Data("{\"title\": \"start\", \"tags\": [], \"views\": 0, \"top\": 0}\n".utf8)
                default: Self.editingLine(0, of: nil, to: "line 0", lines: replicas * 3 + 3)
                }
            try stores[0].save(start, to: key, device: "r0", date: clock)
        }
        for index in 0..<replicas - 1 { _ = try stores[index].sync(with: stores[index + 1].path) }
    }

    /// One save on `replica`, based on its current version, touching its own part of the document (or a shared one).
    mutating func save(on replica: Int) throws {
        let key = random.pick(routing.documents)
        let store = stores[replica]
        let current = try store.currentVersion(of: key).flatMap { try store.contents(of: $0) }
        clock = clock.addingTimeInterval(Double(random.int(0...2)))
        let token = "v\(random.int(0...9999))"
        let content: Data
        switch routing {
        case .threeWay:
            content = Self.editingLine(replica * 3, of: current, to: "r\(replica) \(token)", lines: stores.count * 3)
        case .personAfterThreeWay:
            // A line of its own most of the time, the shared first line sometimes: some conflicts need a person.
            content = Self.editingLine(random.chance(25) ? 0 : replica * 3 + 3, of: current, to: "r\(replica) \(token)", lines: stores.count * 3 + 3)
        case .overwriteWithCurrent:
            content = Data("r\(replica) \(token)\n".utf8)
        case .lastWriterWinsByKey:
            var object = (try? current.flatMap { try JSONSerialization.jsonObject(with: $0) as? [String: String] }) ?? [:]
            object[random.chance(30) ? "shared" : "r\(replica)"] = token
            content = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        case .fieldRules:
            // Every field, every time: two saves always touch the same fields, and only the rules settle them.
            var object = try current.flatMap { try JSONSerialization.jsonObject(with: $0) as? [String: Any] } ?? [:]
            object["title"] = "r\(replica) \(token)"
            var tags = object["tags"] as? [String] ?? []
            if random.chance(40), !tags.isEmpty { tags.remove(at: random.int(0...tags.count - 1)) } else { tags.append(token) }
            object["tags"] = tags
            let increment = random.int(1...5)
            increments[key, default: 0] += increment
            object["views"] = (object["views"] as? Int ?? 0) + increment
            object["top"] = max(object["top"] as? Int ?? 0, random.int(0...1000))
            content = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        }
        saved.append(try store.save(content, to: key, device: "r\(replica)", date: clock).version)
    }

    /// `a` syncs with `b` and resolves what it sees (sending the resolutions back); then `b` resolves what it sees.
    /// Returns the number of versions that moved.
    @discardableResult
    mutating func sync(_ a: Int, _ b: Int) async throws -> Int {
        let report = try await stores[a].sync(with: stores[b].path, resolving: .standard, device: "r\(a)")
        resolutionsWritten += report.resolved.count
        resolutionsWritten += try answerAsAPerson(on: a)
        await resolutionsWritten += try resolveEverything(on: b)
        return report.received.count + report.sent
    }

    /// Every replica syncs with the next, in order.
    mutating func ringRound() async throws -> Int {
        var moved = 0
        for index in stores.indices { await moved += try sync(index, (index + 1) % stores.count) }
        return moved
    }

    private mutating func resolveEverything(on replica: Int) async throws -> Int {
        let results = try await stores[replica].resolveAll(registry: .standard, device: "r\(replica)")
        return results.values.filter { if case .resolved = $0 { true } else { false } }.count + (try answerAsAPerson(on: replica))
    }

    /// What needs a person gets the same answer on every replica: the current version's text at every point.
    private func answerAsAPerson(on replica: Int) throws -> Int {
        guard routing == .personAfterThreeWay else { return 0 }
        let store = stores[replica]
        var answered = 0
        for versions in try store.documentsInConflict() {
            let points = try store.conflictPoints(of: versions.key)
            try store.resolve(versions.key, answers: Dictionary(uniqueKeysWithValues: points.map { ($0.id, HunkAnswer.ours) }), device: "r\(replica)")
            answered += 1
        }
        return answered
    }

    /// Documents whose heads differ between replicas or that have more than one head; empty once converged.
    func divergence() throws -> [String] {
        var problems: [String] = []
        for key in routing.documents + [".truce/attributes"] {
            let heads = try stores.map { try $0.versions(of: key) }
            for (index, versions) in heads.enumerated() where versions.allHeads.count != 1 {
                problems.append("r\(index): \(key) has \(versions.allHeads.count) heads")
            }
            let ids = Set(heads.compactMap(\.current?.id))
            if ids.count > 1 { problems.append("\(key): replicas disagree on the head: \(ids.map(\.short).sorted())") }
            let bytes = Set(try stores.map { try $0.contents(of: key) })
            if bytes.count > 1 { problems.append("\(key): replicas hold \(bytes.count) different contents") }
        }
        return problems
    }

    /// Every resolution commit in replica 0's histories (after convergence it holds everything).
    func resolutionCommits() throws -> [Version] {
        try routing.documents.flatMap { try stores[0].history(of: $0).filter(\.isResolution) }
    }

    /// `current` with line `index` replaced (the document padded to `lines` lines): replicas that edit lines two
    /// apart never touch the same or neighbouring lines.
    static func editingLine(_ index: Int, of current: Data?, to text: String, lines count: Int) -> Data {
        var lines =
            current.map { String(decoding: $0, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init) } ?? []
        if lines.last == "" { lines.removeLast() }
        // Filler lines differ from each other, so that every diff aligns one way only.
        while lines.count < count { lines.append("line \(lines.count)") }
        lines[index] = text
        return Data((lines.joined(separator: "\n") + "\n").utf8)
    }
}
