import Foundation
import Testbed
import Truce

/// One change synced through a hub that many replicas share (`truce-bench --replicas 2,100,1000`): a store of 1,000
/// documents, a bare hub served by `git daemon` on 127.0.0.1, and N replicas that each joined it once, as a family's
/// devices over years leave them. A writer's change is synced up, a reader syncs it down, then syncs again with nothing
/// new; bytes are counted on the wire by a relay in front of the daemon. Each count's figures sit beside the smallest
/// count's (the target: within 1.5×), and the no-op beside plain git's `git fetch` of a mirror of the same hub.
enum ReplicaRows {
    static let documents = 1000
    /// Runs of each measurement; the rows show the median.
    static let runs = 3

    struct Figures {
        let replicas: Int
        let up: WireMeasurement, down: WireMeasurement, noOp: WireMeasurement
        let gitNoOp: Double
        let hubBytes: Int
    }

    static func rows(counts: [Int]) throws -> [Row] {
        let daemon = try GitDaemon()
        defer { daemon.server.stop() }
        let relay = try CountingRelay(forwardingTo: daemon.port)
        defer { relay.stop() }
        let figures = try counts.sorted().map { try measure(replicas: max($0, 2), daemon: daemon, relay: relay) }
        guard let first = figures.first else { return [] }
        return rows(figures, first: first)
    }

    /// Convergence through one hub: 100 replicas save and sync at random, then sync with the hub in turn, a round at a
    /// time, until every one holds one same head.
    static func convergence() async throws -> [Row] {
        let directory = scratchDirectory("replicas-convergence")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = runChild("git", ["init", "-q", "--bare", directory + "/hub.git"])
        return try await ConvergenceRows.rows(count: 100, saves: 300, topology: .hub(directory + "/hub.git"))
    }

    private static func rows(_ figures: [Figures], first: Figures) -> [Row] {
        figures.flatMap { figure -> [Row] in
            func row(_ what: String, _ measured: WireMeasurement, _ reference: WireMeasurement) -> Row {
                let ratio = measured.seconds / reference.seconds
                return Row(
                    work: "\(what) with \(figure.replicas) replicas on the hub (\(format(bytes: measured.bytes)) on the wire)",
                    truce: format(measured.seconds),
                    baseline: "\(first.replicas) replicas: \(format(reference.seconds)), \(format(bytes: reference.bytes))", ratio: ratio,
                    target: "≤ 1.5× and ≤ 1.5× the bytes",
                    met: ratio <= 1.5 && Double(measured.bytes) <= 1.5 * Double(max(reference.bytes, 1)))
            }
            return [
                row("one change synced up", figure.up, first.up),
                row("  synced down", figure.down, first.down),
                row("  a sync that brings nothing", figure.noOp, first.noOp),
                Row(
                    work: "  the same no-op beside git fetch of a mirror of that hub", truce: format(figure.noOp.seconds),
                    baseline: "git fetch: \(format(figure.gitNoOp))", ratio: figure.noOp.seconds / figure.gitNoOp, target: "< 0.2 s",
                    met: figure.noOp.seconds < 0.2),
                Row(
                    work: "  the hub's size (\(figure.replicas) replicas, \(documents) documents)", truce: format(bytes: figure.hubBytes),
                    baseline: "\(first.replicas) replicas: \(format(bytes: first.hubBytes))",
                    ratio: Double(figure.hubBytes) / Double(max(first.hubBytes, 1)), target: "(reference)", met: true),
            ]
        }
    }

    private static func measure(replicas: Int, daemon: GitDaemon, relay: CountingRelay) throws -> Figures {
        let directory = scratchDirectory("replicas")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let name = "replicas-\(replicas).git"
        _ = try daemon.makeHub(name)
        defer { try? FileManager.default.removeItem(atPath: daemon.root + "/" + name) }
        let hubPath = daemon.root + "/" + name, url = "git://127.0.0.1:\(relay.port)/\(name)"
        func progress(_ text: String) { FileHandle.standardError.write(Data("truce-bench: replicas \(replicas): \(text)\n".utf8)) }
        progress("a writer of \(documents) documents")
        let writer = try DocumentStore(directory: URL(fileURLWithPath: directory + "/writer"), mode: .createNew)
        let start = Date(timeIntervalSince1970: 1_796_000_000)
        _ = try writer.saveBatchOnCallingThread(
            (0..<documents).map { BatchSave(key: try! DocumentKey("docs/\($0).txt"), content: Data("document \($0)\n".utf8), date: start) })
        _ = try writer.syncOnCallingThread(with: url)
        // The writer and the reader are two of the replicas; the others join once and are gone, their manifests stay.
        let reader = try DocumentStore(directory: URL(fileURLWithPath: directory + "/reader"), mode: .createNew)
        _ = try reader.syncOnCallingThread(with: url)
        for index in 0..<(replicas - 2) {
            if index % 100 == 0 { progress("replica \(index + 3) of \(replicas) joins") }
            let path = directory + "/joining"
            let joining = try DocumentStore(directory: URL(fileURLWithPath: path), mode: .createNew)
            // Through the server, as a device joins: a push to the hub's path would leave a pack per join there, which
            // no served hub keeps (receive-pack unpacks small pushes, and its gc --auto packs them).
            _ = try joining.syncOnCallingThread(with: url)
            try FileManager.default.removeItem(atPath: path)
        }
        _ = try writer.syncOnCallingThread(with: url)
        _ = try reader.syncOnCallingThread(with: url)
        var ups: [WireMeasurement] = [], downs: [WireMeasurement] = [], noOps: [WireMeasurement] = []
        for run in 0..<runs {
            try writer.save(Data("changed \(run)\n".utf8), to: try DocumentKey("docs/\(run).txt"), device: "writer")
            ups.append(try relay.measure { _ = try writer.syncOnCallingThread(with: url) })
            downs.append(try relay.measure { _ = try reader.syncOnCallingThread(with: url) })
            noOps.append(try relay.measure { _ = try reader.syncOnCallingThread(with: url) })
        }
        guard try reader.contents(of: try DocumentKey("docs/\(runs - 1).txt")) == Data("changed \(runs - 1)\n".utf8) else {
            throw RelayError("the reader did not receive the writer's change")
        }
        // git's side: a mirror of the same hub, fetched again with nothing new (it negotiates every replica's ref too).
        let mirror = directory + "/git-mirror"
        _ = runChild("git", ["clone", "-q", "--mirror", url, mirror])
        let gitNoOp = median((0..<runs).map { _ in seconds { _ = runChild("git", ["-C", mirror, "fetch", "-q", url]) } })
        let hubBytes = Int(String(decoding: runChild("du", ["-sb", hubPath]).output, as: UTF8.self).split(separator: "\t").first ?? "") ?? 0
        func medianOf(_ values: [WireMeasurement]) -> WireMeasurement {
            WireMeasurement(bytes: Int(median(values.map(\.bytes))), seconds: median(values.map(\.seconds)))
        }
        return Figures(
            replicas: replicas, up: medianOf(ups), down: medianOf(downs), noOp: medianOf(noOps), gitNoOp: gitNoOp, hubBytes: hubBytes)
    }
}
