import Foundation
import Testbed
import Truce

/// Many replicas, each resolving whatever it sees after every sync: how fast they settle, and how many commits it takes.
enum ConvergenceRows {
    /// Who a replica syncs with: the next replica in a ring (store to store), or one hub all of them share.
    enum Topology {
        case ring
        case hub(String)
    }

    static func replicas(_ scale: Scale) async throws -> [Row] {
        try await rows(count: scale.quick ? 5 : 10, saves: scale.quick ? 50 : 200, topology: .ring)
    }

    /// `count` replicas that save `saves` edits between random syncs, then sync in turn, a round at a time, until all
    /// hold one same head of every document.
    static func rows(count: Int, saves: Int, topology: Topology) async throws -> [Row] {
        let directory = scratchDirectory("convergence")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let stores = try (0..<count).map { try DocumentStore(directory: URL(fileURLWithPath: directory + "/r\($0)"), mode: .createNew) }
        let keys: [DocumentKey] = ["a.txt", "notes/b.txt", "c.txt", "d.txt"]
        var clock = Date(timeIntervalSince1970: 1_796_000_000)
        try stores[0].save(Data("*.txt merge=three-way\n".utf8), to: ".truce/attributes", device: "r0", date: clock)
        // Every replica edits a line of its own, two lines apart from the others': the merges are clean.
        func edited(_ current: Data?, line: Int, to text: String) -> Data {
            var lines = current.map { String(decoding: $0, as: UTF8.self).split(separator: "\n").map(String.init) } ?? []
            while lines.count < count * 3 { lines.append("line \(lines.count)") }
            lines[line] = text
            return Data((lines.joined(separator: "\n") + "\n").utf8)
        }
        for key in keys { try stores[0].save(edited(nil, line: 0, to: "line 0"), to: key, device: "r0", date: clock) }
        func partner(of a: Int, _ b: Int) -> String {
            if case .hub(let hub) = topology { return hub }
            return stores[b].path
        }
        for index in 0..<count - 1 { _ = try await stores[index].sync(with: partner(of: index, index + 1)) }
        if case .hub = topology { _ = try await stores[count - 1].sync(with: partner(of: count - 1, 0)) }

        var random = SeededRandom(seed: 0x5EED_C0DE)
        var writtenCommits = Set<VersionID>()
        func sync(_ a: Int, _ b: Int) async throws -> Int {
            let report = try await stores[a].sync(with: partner(of: a, b), resolving: true, registry: .standard, device: "r\(a)")
            // A hub resolves nothing; a replica on the other end of a store-to-store sync resolves what it received.
            guard case .ring = topology else { return report.receivedCount + report.sent }
            for (_, result) in try await stores[b].resolveAll(registry: .standard, device: "r\(b)") {
                if case .resolved(let version, _, _) = result { writtenCommits.insert(version.id) }
            }
            return report.receivedCount + report.sent
        }
        var saved = 0
        while saved < saves {
            let replica = random.int(0..<count)
            if random.int(0..<100) < 70 {
                let key = keys[random.int(0..<keys.count)]
                clock = clock.addingTimeInterval(1)
                let current = try stores[replica].contents(of: key)
                try stores[replica].save(edited(current, line: replica * 3, to: "r\(replica) v\(saved)"), to: key, device: "r\(replica)", date: clock)
                saved += 1
            } else {
                _ = try await sync(replica, (replica + 1 + random.int(0..<count - 1)) % count)
            }
        }
        var rounds = 0
        var converged = false
        while rounds < 6 && !converged {
            rounds += 1
            for index in 0..<count { _ = try await sync(index, (index + 1) % count) }
            converged = try keys.allSatisfy { key in
                let heads = try stores.map { try $0.versions(of: key).allHeads.map(\.id) }
                return Set(heads).count == 1 && heads[0].count == 1
            }
        }
        let resolutions = try keys.flatMap { try stores[0].history(of: $0).filter(\.isResolution) }
        let distinctConflicts = Set(resolutions.map { "\($0.key) \($0.parents.sorted())" }).count
        let perConflict = Double(resolutions.count) / Double(max(distinctConflicts, 1))
        let shape = if case .ring = topology { "ring" } else { "hub" }
        let work = "\(count) replicas, \(saves) saves, each resolving after each sync"
        return [
            Row(
                work: work + ": \(shape) rounds after saves stop until all hold one same head",
                truce: converged ? "\(rounds) round(s)" : "not converged after \(rounds)",
                baseline: "before deterministic resolutions: never", ratio: Double(rounds), target: "≤ 2 rounds", met: converged && rounds <= 2),
            Row(
                work: work + ": resolution commits per distinct conflict", truce: "\(resolutions.count) commits",
                baseline: "\(distinctConflicts) conflicts settled", ratio: perConflict, target: "≤ 1.0 per conflict",
                met: converged && perConflict <= 1.0),
        ]
    }
}
