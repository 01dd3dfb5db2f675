import Foundation
import Testbed
import Truce

/// An encrypted hub beside a plain one, in one run (`truce-bench --encrypted [--quick]`): two hubs served by one
/// `git daemon` on 127.0.0.1 behind a relay that counts the bytes on the wire. A writer of N documents syncs to both;
/// a new replica's first sync from each is timed; then one changed document is synced up and down through each, and
/// its bytes counted. The targets: the first sync within 2× the plain one's time, one change within 2× the
/// plain one's bytes plus a fixed 16 KiB, whatever the store's size.
enum EncryptedHubRows {
    static let runs = 3
    static let fixedOverhead = 16 * 1024

    static func rows(quick: Bool) async throws -> [Row] {
        let daemon = try GitDaemon()
        defer { daemon.server.stop() }
        let relay = try CountingRelay(forwardingTo: daemon.port)
        defer { relay.stop() }
        var rows: [Row] = []
        for documents in quick ? [1_000, 10_000] : [10_000, 100_000] {
            rows += try await measure(documents: documents, daemon: daemon, relay: relay)
        }
        return rows
    }

    private static func measure(documents: Int, daemon: GitDaemon, relay: CountingRelay) async throws -> [Row] {
        let directory = scratchDirectory("encrypted-\(documents)")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func progress(_ text: String) { FileHandle.standardError.write(Data("truce-bench: encrypted \(documents): \(text)\n".utf8)) }
        let plainName = "plain-\(documents).git", sealedName = "sealed-\(documents).git"
        for name in [plainName, sealedName] { _ = try daemon.makeHub(name) }
        defer { for name in [plainName, sealedName] { try? FileManager.default.removeItem(atPath: daemon.root + "/" + name) } }
        let plain = "git://127.0.0.1:\(relay.port)/\(plainName)", sealed = "git://127.0.0.1:\(relay.port)/\(sealedName)"

        progress("a writer of \(documents) documents syncs to both hubs")
        let writer = try DocumentStore(directory: URL(fileURLWithPath: directory + "/writer"), mode: .createNew)
        let start = Date(timeIntervalSince1970: 1_796_000_000)
        _ = try await writer.saveBatch(
            (0..<documents).map { BatchSave(key: try! DocumentKey("d\($0 % 100)/doc\($0).txt"), content: Data("document \($0)\n".utf8), date: start) }
        )
        _ = try await writer.encryptHub(sealed)
        _ = try await writer.sync(with: plain)
        _ = try await writer.sync(with: sealed)

        progress("first syncs of a new replica")
        let plainReader = try DocumentStore(directory: URL(fileURLWithPath: directory + "/plain-reader"), mode: .createNew)
        let plainFirst = try await relay.measureAwaiting { _ = try await plainReader.sync(with: plain) }
        let sealedReader = try DocumentStore(directory: URL(fileURLWithPath: directory + "/sealed-reader"), mode: .createNew)
        // Joining fetches what the hub holds (it reads the key ring, and the entries come with it): part of the first sync.
        var asking: EncryptedHubDevices?
        let joining = try await relay.measureAwaiting { asking = try await sealedReader.joinEncryptedHub(sealed) }
        try await writer.approveDevice(asking!.thisDevice, on: sealed)
        let sealedFirst = try await joining + relay.measureAwaiting { _ = try await sealedReader.sync(with: sealed) }
        guard try sealedReader.contents(of: DocumentKey("d7/doc7.txt")) == Data("document 7\n".utf8) else {
            throw RelayError("the encrypted hub's reader did not receive the writer's documents")
        }

        progress("one change, up and down")
        var plainChange: [WireMeasurement] = [], sealedChange: [WireMeasurement] = []
        for run in 0..<runs {
            try writer.save(Data("changed \(run)\n".utf8), to: try DocumentKey("d\(run)/doc\(run).txt"), device: "writer")
            plainChange.append(
                try await relay.measureAwaiting { _ = try await writer.sync(with: plain) }
                    + relay.measureAwaiting { _ = try await plainReader.sync(with: plain) })
            sealedChange.append(
                try await relay.measureAwaiting { _ = try await writer.sync(with: sealed) }
                    + relay.measureAwaiting { _ = try await sealedReader.sync(with: sealed) })
        }
        guard try sealedReader.contents(of: try DocumentKey("d\(runs - 1)/doc\(runs - 1).txt")) == Data("changed \(runs - 1)\n".utf8) else {
            throw RelayError("the encrypted hub's reader did not receive the change")
        }
        func medianOf(_ values: [WireMeasurement]) -> WireMeasurement {
            WireMeasurement(bytes: Int(median(values.map(\.bytes))), seconds: median(values.map(\.seconds)))
        }
        let (plainOne, sealedOne) = (medianOf(plainChange), medianOf(sealedChange))
        let firstRatio = sealedFirst.seconds / plainFirst.seconds
        let bytesAllowed = 2 * plainOne.bytes + fixedOverhead
        return [
            Row(
                work: "first sync of \(documents) documents from an encrypted hub (\(format(bytes: sealedFirst.bytes)) on the wire)",
                truce: format(sealedFirst.seconds), baseline: "plain hub: \(format(plainFirst.seconds)), \(format(bytes: plainFirst.bytes))",
                ratio: firstRatio, target: "≤ 2×", met: firstRatio <= 2),
            Row(
                work: "one change up and down through it, \(documents) documents (\(format(bytes: sealedOne.bytes)) on the wire)",
                truce: format(sealedOne.seconds), baseline: "plain hub: \(format(plainOne.seconds)), \(format(bytes: plainOne.bytes))",
                ratio: Double(sealedOne.bytes) / Double(max(plainOne.bytes, 1)), target: "bytes ≤ 2× + 16 KiB",
                met: sealedOne.bytes <= bytesAllowed),
        ]
    }
}
