import Foundation
import TestSupport
import Testing

/// `truce sync` with an encrypted hub killed with SIGKILL at random moments: nothing acknowledged is lost, the hub and
/// every store stay whole, and the next sync completes.
@Suite(.timeLimit(.minutes(10)), .serialized) struct EncryptedHubCrashTests {
    /// A bare repository on a local path that `writer` made an encrypted hub, joined by `reader` and approved.
    static func encryptedHub(_ name: String) throws -> (bare: BareRepository, writer: CLIStore, reader: CLIStore) {
        let bare = try BareRepository(name), hub = bare.path
        let writer = try CLIStore(), reader = try CLIStore()
        #expect(try writer.run("hub", "encrypt", hub).status == 0)
        let asking = try truce(["hub", "join", hub, "--json"], store: reader.path)
        let device = try #require((JSONSerialization.jsonObject(with: asking.stdout) as? [String: Any])?["thisDevice"] as? String)
        #expect(try writer.run("hub", "approve", device, hub).status == 0)
        return (bare, writer, reader)
    }

    @Test func syncsKilledAtRandomMomentsLoseNothingAndTheNextOneCompletes() throws {
        var random = SeededRandom(seed: Reliability.seed(47, for: "encrypted-hub-crash"))
        let (bare, writer, reader) = try Self.encryptedHub("truce-crash-hub")
        let hub = bare.path

        var typical = 0.3, killedMidway = 0
        var saved: [String: String] = [:]
        for round in 0..<Reliability.size(ci: 12, heavy: 60) {
            let key = "notes/\(round % 5).md", text = "round \(round)\n"
            try writer.save(key, text)
            saved[key] = text
            let store = round % 3 == 2 ? reader : writer
            let sync = try BackgroundProcess(["sync", hub], store: store.path)
            usleep(UInt32((0.05 + Double(random.next() % 1000) / 1000) * typical * 1_000_000))
            if sync.kill() { killedMidway += 1 }
            let ending = sync.wait()
            // A sync right after a kill may find the killed one's ref lock, younger than a stale one: busy, to retry.
            let busy = Reliability.isBusy(status: ending.status, errorLines: ending.errorOutput.split(separator: "\n").map(String.init))
            if !ending.killed && !busy {
                #expect(ending.status == 0, "\(ending.errorOutput)")
                typical = max(0.05, ending.seconds)
            }
            for path in [writer.path, reader.path] {
                let problems = try Reliability.fsckProblems(path)
                #expect(problems.isEmpty, "\(problems)")
            }
            #expect(try git(["-C", hub, "fsck", "--strict"]).status == 0)
        }
        print("encrypted-hub-crash: \(killedMidway) kills landed while a sync ran")
        #expect(killedMidway > 0, "no kill landed while a sync ran")
        for store in [writer, reader, writer, reader] {
            var synced = try store.run("sync", hub)
            for _ in 0..<4 where Reliability.isBusy(status: synced.status, errorLines: synced.errorLines) {
                sleep(2)
                synced = try store.run("sync", hub)
            }
            #expect(synced.status == 0, "\(synced.errorOutput)")
        }
        for (key, text) in saved {
            #expect(try reader.run("cat", key).output == text, "\(key)")
            #expect(try writer.run("versions", key).output == reader.run("versions", key).output)
        }
    }

    /// Syncs of one store with one encrypted hub, and of two stores, all at once: each waits for the cache it needs,
    /// none fails for another, and nothing is lost.
    @Test func concurrentSyncsWithOneEncryptedHubAllComplete() throws {
        let (bare, writer, reader) = try Self.encryptedHub("truce-concurrent-hub")
        let hub = bare.path
        for round in 0..<4 {
            try writer.save("w/\(round).md", "writer \(round)\n")
            try reader.save("r/\(round).md", "reader \(round)\n")
            let syncs = try [writer, writer, reader, reader].map { try BackgroundProcess(["sync", hub], store: $0.path) }
            for sync in syncs {
                let ending = sync.wait()
                #expect(ending.status == 0, "\(ending.errorOutput)")
            }
        }
        for store in [writer, reader, writer] { #expect(try store.run("sync", hub).status == 0) }
        for round in 0..<4 {
            #expect(try writer.run("cat", "r/\(round).md").output == "reader \(round)\n")
            #expect(try reader.run("cat", "w/\(round).md").output == "writer \(round)\n")
        }
        for path in [writer.path, reader.path] { #expect(try Reliability.fsckProblems(path).isEmpty) }
        #expect(try git(["-C", hub, "fsck", "--strict"]).status == 0)
    }
}
