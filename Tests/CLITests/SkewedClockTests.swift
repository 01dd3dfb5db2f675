import Foundation
import TestSupport
import Testing

/// Three replicas through one hub: one whose clock runs four years ahead, one four years behind, one right.
///
/// Each round every replica edits its documents (its clock is its `--date`),
/// all sync, so the documents are in conflict everywhere, and then each
/// person saves on top of what they see as current; sometimes one resolves.
/// Every save made on top of the current version must become current, the
/// replicas must converge once saves stop, and in every store a version's
/// author date is never before its parents' (`git log` is the oracle).
@Suite(.timeLimit(.minutes(10))) struct SkewedClockTests {
    static let fourYears: TimeInterval = 4 * 365 * 86_400
    static let documents = ["notes/a.md", "b.txt", "deep/c.txt"]

    struct Replica {
        let name: String
        let store: CLIStore
        /// How far this device's clock is from the right time.
        let skew: TimeInterval

        /// The options that date a save by this device's clock.
        func clock() -> [String] {
            guard skew != 0 else { return [] }
            return ["--date", ISO8601DateFormatter().string(from: Date() + skew)] + (skew > 0 ? ["--allow-future-date"] : [])
        }
    }

    @Test func savesOnTopOfTheCurrentVersionBecomeCurrentWhateverTheClocksAndReplicasConverge() throws {
        let hub = TemporaryDirectory("truce-skew-hub")
        #expect(try git("init", "-q", "--bare", hub.file("hub.git")).status == 0)
        let replicas = [
            Replica(name: "fast", store: try CLIStore(), skew: Self.fourYears),
            Replica(name: "slow", store: try CLIStore(), skew: -Self.fourYears),
            Replica(name: "right", store: try CLIStore(), skew: 0),
        ]
        var random = SeededRandom(seed: 0x5CE3)
        var saves = 0, resolutions = 0
        for round in 0..<4 {
            // Each edits what it has (concurrently, so the documents go into conflict), then all sync, twice, through the hub.
            for replica in replicas {
                for document in Self.documents where random.chance(80) {
                    try replica.store.save(document, "\(replica.name) round \(round)\n", "--device", replica.name, "--json")
                }
            }
            for replica in replicas + replicas {
                let sync = try replica.store.run("sync", hub.file("hub.git"))
                #expect(sync.status == 0, "\(replica.name) sync: \(sync.errorOutput)")
            }
            // Each person saves on top of what they see as current, conflict or not: that save must become current.
            for replica in replicas {
                for document in Self.documents {
                    let saved = try replica.store.save(document, "\(replica.name) on top, round \(round)\n", "--device", replica.name)
                    saves += 1
                    let versions = try replica.store.json("versions", document)
                    let heads = 1 + ((versions["conflicts"] as? [Any])?.count ?? 0)
                    #expect(
                        (versions["current"] as? [String: Any])?["id"] as? String == saved,
                        "round \(round): \(replica.name)'s save on top of the current \(document) is not current among \(heads) heads")
                }
                if random.chance(40) {
                    let resolved = try replica.store.run("resolve", "--all", "--resolver", "overwrite-with-current", "--device", replica.name)
                    #expect([0, 1].contains(resolved.status), "\(resolved.errorOutput)")
                    resolutions += 1
                }
            }
        }
        // Saves stop: each replica syncs, resolves what it sees, and syncs again until every one holds the same heads.
        for replica in replicas + replicas { #expect(try replica.store.run("sync", hub.file("hub.git")).status == 0) }
        for replica in replicas {
            #expect(try replica.store.run("resolve", "--all", "--resolver", "overwrite-with-current", "--device", replica.name).status == 0)
        }
        for replica in replicas + replicas { #expect(try replica.store.run("sync", hub.file("hub.git")).status == 0) }
        let heads = try replicas.map { try Self.heads(in: $0.store.path) }
        #expect(heads[0] == heads[1] && heads[1] == heads[2], "the replicas did not converge: \(heads)")
        #expect(heads[0].count == Self.documents.count, "a document is still in conflict: \(heads[0])")
        for replica in replicas {
            #expect(try Self.datesGoingBack(in: replica.store.path) == [], "\(replica.name)")
            #expect(try Reliability.fsckProblems(replica.store.path) == [], "\(replica.name)")
        }
        #expect(saves == 4 * 3 * Self.documents.count && resolutions > 0, "\(saves) saves, \(resolutions) resolutions")
    }

    @Test func statusAndExplainPointOutVersionsDatedFarAheadAndKeepThem() throws {
        let right = try CLIStore(), fast = try CLIStore()
        let base = try right.save("a.md", "base\n", "--device", "right")
        #expect(try fast.run("sync", right.path).status == 0)
        #expect(try right.run("status").output == "no documents in conflict\n")
        let ahead = Date() + Self.fourYears
        let theirs = try fast.save("a.md", "fast\n", "--device", "fast", "--date", ISO8601DateFormatter().string(from: ahead), "--allow-future-date")
        let mine = try right.save("a.md", "mine\n", "--device", "right", "--base", base)
        #expect(try right.run("sync", fast.path).status == 0)

        let status = try right.run("status")
        #expect(status.status == 0)
        let lines = status.output.split(separator: "\n").map(String.init)
        #expect(lines.first == "a.md: in conflict (2 heads, 1 dated ahead of this device's clock)", "\(status.output)")
        #expect(lines.count == 2 && lines[1].hasPrefix("note: versions adopted by sync are dated up to "), "\(status.output)")
        #expect(lines.last?.contains("1459 days ahead of this device's clock") == true, "\(status.output)")
        let json = try right.json("status")
        #expect(json["adoptedDatedAheadUntil"] as? String != nil)

        let explain = try right.run("explain", "a.md").output
        #expect(explain.contains("dated ahead: \(theirs.prefix(7)) is dated "), "\(explain)")
        #expect(!explain.contains("dated ahead: \(mine.prefix(7))"), "\(explain)")
        #expect((try right.json("explain", "a.md")["datedAhead"] as? [String]) == [theirs])
        // Kept: the future version is current, and a save on top of it is dated after it and becomes current.
        #expect(try right.run("cat", "a.md").output == "fast\n")
        let after = try right.save("a.md", "after\n", "--device", "right")
        #expect((try right.json("versions", "a.md")["current"] as? [String: Any])?["id"] as? String == after)
        #expect(try Self.datesGoingBack(in: right.path) == [])
    }

    @Test func aDateMoreThanADayAheadIsRefusedWithOneLineUnlessForced() throws {
        let store = try CLIStore()
        let ahead = ISO8601DateFormatter().string(from: Date() + 2 * 86_400)
        let before = snapshot(ofStore: store.path)
        for command in [["save", "a.md", "-"], ["import", "-"]] {
            let refused = try truce(command + ["--date", ahead], store: store.path, input: .text(command[0] == "import" ? "" : "x\n"))
            #expect(refused.status == 2, "\(command): \(refused.errorOutput)")
            #expect(refused.errorLines.count == 1 && refused.errorLines[0].hasPrefix("truce: date \(ahead) is more than a day ahead"))
        }
        #expect(snapshot(ofStore: store.path) == before)
        let forced = try store.run("save", "a.md", "-", "--date", ahead, "--allow-future-date", input: .text("x\n"))
        #expect(forced.status == 0, "\(forced.errorOutput)")
        #expect(try store.run("delete", "a.md", "--date", ahead).status == 2)
        #expect(try store.run("delete", "a.md", "--date", ahead, "--allow-future-date").status == 0)
    }

    /// Each document's current version id, from `versions --json`.
    static func heads(in store: String) throws -> [String: String] {
        var heads: [String: String] = [:]
        for document in documents {
            let result = try truce(["versions", document, "--json"], store: store)
            let json = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
            #expect((json["conflicts"] as? [Any])?.isEmpty == true, "\(document) in \(store) is in conflict")
            heads[document] = (json["current"] as? [String: Any])?["id"] as? String
        }
        return heads
    }

    /// Every commit reachable from a head whose author date is before one of its parents', as `git log` reads them.
    static func datesGoingBack(in store: String) throws -> [String] {
        let log = try git("-C", store, "log", "--format=%H %at %P", "--glob=refs/truce/heads")
        var dates: [String: Int] = [:], parents: [String: [String]] = [:]
        for line in log.output.split(separator: "\n") {
            let fields = line.split(separator: " ").map(String.init)
            dates[fields[0]] = Int(fields[1])
            parents[fields[0]] = Array(fields.dropFirst(2))
        }
        #expect(!dates.isEmpty, "git log read nothing: \(log.errorOutput)")
        return dates.keys.sorted().flatMap { id in
            parents[id, default: []].compactMap { parent in
                dates[parent].flatMap { $0 > dates[id]! ? "\(id) dated \(dates[id]!) before its parent \(parent) (\($0))" : nil }
            }
        }
    }
}
