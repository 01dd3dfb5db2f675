import Foundation
import TestSupport
import Testing

/// Damaged stores and hostile replicas, chosen at random: nothing hangs, nothing is lost, nothing bad gets in.
///
/// Each test builds a store with real `truce` commands, then damages it the
/// way a disk, a crash or an attacker would, runs the commands a user would
/// run next, and checks with `git fsck --strict` and the acknowledged
/// versions that the damage was reported and nothing else changed.
@Suite(.timeLimit(.minutes(20))) struct ReliabilityDamageTests {
    /// A store with `documents` documents, each saved a few times; returns every acknowledged version per document.
    static func populatedStore(in directory: TemporaryDirectory, documents: Int, random: inout SeededRandom) throws -> (String, [String: [String]]) {
        let store = try Reliability.makeStore(in: directory, named: "store")
        var acknowledged: [String: [String]] = [:]
        for index in 0..<documents {
            let key = "notes/\(index).md"
            for round in 0..<random.int(1...3) {
                let text = (0..<random.int(1...300)).map { "line \($0) of \(key) round \(round)\n" }.joined()
                let result = try truce(["save", key, "-"], store: store, input: .text(text))
                guard result.status == 0, let id = Reliability.savedID(result.output) else { throw ReliabilityFailure("save: \(result.errorOutput)") }
                acknowledged[key, default: []].append(id)
            }
        }
        return (store, acknowledged)
    }

    @Test func damagedHeadRefsStopPruneUntilRepairedAndLoseNothing() throws {
        let seed = Reliability.seed(0xDA_4A6E, for: "damaged head refs")
        var random = SeededRandom(seed: seed)
        let directory = TemporaryDirectory("truce-damage")
        let (store, acknowledged) = try Self.populatedStore(in: directory, documents: Reliability.size(ci: 6, heavy: 30), random: &random)
        let refs = try git(["-C", store, "for-each-ref", "--format=%(refname)", "refs/truce/heads/"]).output.split(separator: "\n").map(String.init)
        let garbage: [Data] = [
            Data(), .text("\n"), .text("garbage\n"), .text(String(repeating: "z", count: 40) + "\n"), .text("ref: \n"),
            Data((0..<41).map { _ in UInt8.random(in: 0...255) }),
        ]
        for iteration in 0..<Reliability.size(ci: 8, heavy: 60) {
            let name = random.pick(refs)
            let file = store + "/" + name
            let original = try Data(contentsOf: URL(fileURLWithPath: file))
            try random.pick(garbage).write(to: URL(fileURLWithPath: file))
            let before = snapshot(ofStore: store)
            let command = random.pick([["prune", "--now"], ["prune"], ["status"], ["versions", random.pick(Array(acknowledged.keys))]])
            let result = try truce(command, store: store)
            let lines = result.errorLines
            if command[0] == "prune" {
                #expect(
                    result.status == 3 && lines.count == 1 && lines[0].contains(name),
                    "seed \(seed) iteration \(iteration): \(command) with \(name) damaged: exit \(result.status) \(lines)")
            } else {
                #expect(
                    result.status == 0 || (result.status == 3 && lines.count == 1 && lines[0].contains(name)),
                    "seed \(seed) iteration \(iteration): \(command) with \(name) damaged: exit \(result.status) \(lines)")
            }
            #expect(snapshot(ofStore: store) == before, "seed \(seed) iteration \(iteration): \(command) changed a damaged store")
            try original.write(to: URL(fileURLWithPath: file))
        }
        #expect(try truce(["prune", "--now"], store: store).status == 0)
        #expect(try Reliability.lostVersions(Set(acknowledged.values.joined()), in: store) == [], "seed \(seed)")
        #expect(try Reliability.fsckProblems(store) == [], "seed \(seed)")
    }

    @Test func truncatedLooseObjectsFailEveryCommandWithinSeconds() throws {
        let seed = Reliability.seed(0x7A_0C47, for: "truncated loose objects")
        var random = SeededRandom(seed: seed)
        let directory = TemporaryDirectory("truce-damage")
        let (store, acknowledged) = try Self.populatedStore(in: directory, documents: Reliability.size(ci: 4, heavy: 20), random: &random)
        let replica = try Reliability.makeStore(in: directory, named: "replica")
        func looseObjects() throws -> [String] {
            try FileManager.default.subpathsOfDirectory(atPath: store + "/objects").filter { $0.count == 41 && $0.dropFirst(2).first == "/" }.sorted()
        }
        let keys = Array(acknowledged.keys).sorted()
        for iteration in 0..<Reliability.size(ci: 12, heavy: 100) {
            // Saves and prunes write packs; a store git wrote to holds loose objects, which are what this damage is about.
            var loose = try looseObjects()
            if loose.isEmpty {
                #expect(try truce(["save", random.pick(keys), "-"], store: store, input: .text("again \(iteration)\n")).status == 0)
                try unpackObjects(inStore: store)
                loose = try looseObjects()
            }
            let relative = try #require(loose.isEmpty ? nil : random.pick(loose), "no loose object to damage")
            let object = relative.replacingOccurrences(of: "/", with: "")
            let file = store + "/objects/" + relative
            let whole = try Data(contentsOf: URL(fileURLWithPath: file))
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file)
            let length = random.int(2...(whole.count - 1))
            try whole.prefix(length).write(to: URL(fileURLWithPath: file))
            let key = random.pick(keys)
            let command = random.pick([
                ["cat", key], ["versions", key], ["log", key], ["prune"], ["prune", "--now"], ["status"],
                ["save", key, "-"], ["changes"],
            ])
            let ending = try BackgroundProcess(command, store: store, input: .text("new\n")).wait(upTo: 10)
            let situation = "seed \(seed) iteration \(iteration): \(command) with \(object) cut to \(length) of \(whole.count) bytes"
            let finished = try #require(ending, "\(situation) ran past 10 seconds")
            let lines = finished.errorLines
            #expect(
                finished.status == 0 || (finished.status == 3 && lines.count == 1 && lines[0].contains(object)),
                "\(situation): exit \(finished.status) \(lines)")
            // A sync from the damaged store must not hang either, and may adopt only what it could read whole.
            let sync = try BackgroundProcess(["sync", store], store: replica).wait(upTo: 10)
            #expect(sync != nil, "\(situation): a sync from it ran past 10 seconds")
            // A damaged loose copy of an object that is also packed is never read (the pack is), so a prune may have
            // packed and removed it with its directory: put it back where it was all the same.
            try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try whole.write(to: URL(fileURLWithPath: file))
        }
        #expect(try Reliability.lostVersions(Set(acknowledged.values.joined()), in: store) == [], "seed \(seed)")
        #expect(try Reliability.fsckProblems(store) == [], "seed \(seed)")
        #expect(try Reliability.fsckProblems(replica) == [], "seed \(seed)")
    }

    @Test func hostileRemotesGetOnlyTheirGoodHeadsIn() throws {
        let seed = Reliability.seed(0x40_5711E, for: "hostile remotes")
        var random = SeededRandom(seed: seed)
        let directory = TemporaryDirectory("truce-hostile")
        let hostile = try HostileStore(in: directory)
        let local = try Reliability.makeStore(in: directory, named: "local")
        #expect(try truce(["save", "local.md", "-"], store: local, input: .text("mine\n")).status == 0)
        var good: [String: String] = [:], bad: Set<String> = []
        for round in 0..<Reliability.size(ci: 4, heavy: 20) {
            for index in 0..<random.int(1...6) {
                let kind = random.pick(CraftedHead.allCases)
                let crafted = try kind.craft("r\(round)/\(index)-\(kind.rawValue).md", in: hostile)
                if kind.isGood { good[crafted.key] = crafted.head } else { bad.insert(crafted.head) }
            }
            let sync = try truce(["sync", hostile.path], store: local)
            let refused = Set(sync.errorLines.compactMap { $0.split(separator: " ").dropFirst(3).first.map(String.init) })
            // Heads refused in earlier rounds are still advertised, and refused again.
            #expect(sync.status == (bad.isEmpty ? 0 : 3), "seed \(seed) round \(round): exit \(sync.status) \(sync.errorLines)")
            #expect(refused == bad, "seed \(seed) round \(round): refused \(refused.sorted()), crafted bad \(bad.sorted())")
            for head in bad { #expect(try git(["-C", local, "cat-file", "-e", head]).status != 0, "seed \(seed): bad head \(head) got in") }
            for (key, head) in good {
                let versions = try truce(["versions", key, "--json"], store: local)
                #expect(versions.status == 0 && versions.output.contains(head), "seed \(seed) round \(round): good head of \(key) not adopted")
                // Whatever names arrive by sync, text output for people carries no raw control character.
                for command in [["versions", key], ["log", key], ["changes"]] {
                    let shown = try truce(command, store: local).stdout
                    #expect(
                        !shown.contains { $0 < 0x20 && $0 != 0x0A && $0 != 0x09 } && !shown.contains(0x7F),
                        "seed \(seed) round \(round): \(command.joined(separator: " ")) printed a raw control character")
                }
            }
            let problems = try Reliability.fsckProblems(local)
            #expect(problems == [], "seed \(seed) round \(round): \(problems)")
        }
    }
}
