import Foundation
import Testbed
import Truce

/// Sync at scale through a hub that is a plain bare repository (`git init --bare`) served by `git daemon` on
/// 127.0.0.1, each figure beside plain git's on the same hub in the same run; the one-change rows again over http,
/// through `git http-backend`.
///
/// Truce builds the hub itself (a `sync` from a store filled by
/// `importDocuments`, what `truce import` runs), so the rows measure whatever
/// layout the current protocol writes. Bytes are counted on the wire by a relay in front of the daemon, for
/// Truce and git alike; `SyncReport.traffic` (pack data only) is shown beside.
enum SyncRows {
    /// A few documents with a long history among the small ones: a fetch that re-sends history shows on them.
    static let longHistories = 10, longHistoryVersions = 60
    /// Runs of each repeated measurement; the rows show the median.
    static let runs = 3
    /// A measurement slower than this is taken once, so that the full run at 100,000 documents still ends.
    static let cheapSeconds = 30.0
    /// git's side of the one-change rows: a branch at the long document's head.
    static let branch = "refs/heads/bench-document"

    static func atScale(_ scale: Scale) throws -> [Row] {
        let daemon = try GitDaemon()
        defer { daemon.server.stop() }
        let relay = try CountingRelay(forwardingTo: daemon.port)
        defer { relay.stop() }
        // The one-change rows again over http, where every request carries its own headers: git http-backend behind
        // lighttpd, open to anyone so that no 401 round trip is counted, serving copies of the same hubs.
        let web = try HTTPGitServer(tls: false, requiringPassword: false)
        defer { web.server.stop() }
        let webRelay = try CountingRelay(forwardingTo: web.port)
        defer { webRelay.stop() }
        return try scale.syncedDocuments.flatMap { documents in
            let directory = scratchDirectory("sync")
            defer {
                try? FileManager.default.removeItem(atPath: directory)
                for root in [daemon.root, web.root] {
                    for hub in (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [] {
                        try? FileManager.default.removeItem(atPath: root + "/" + hub)
                    }
                }
            }
            let setup = try Setup(documents: documents, in: directory, daemon: daemon, relay: relay)
            let overGit = Transport(name: "git://", hub: setup.hub, gitHub: setup.gitHub, relay: relay)
            var rows = try initialRows(setup) + noOpRows(setup) + oneChangeRows(setup, over: overGit)
            setup.step("copying the hubs to the web server")
            for name in [setup.hubName, setup.gitHubName] {
                try FileManager.default.copyItem(atPath: daemon.root + "/" + name, toPath: web.root + "/" + name)
            }
            let url = { (name: String) in "http://127.0.0.1:\(webRelay.port)/git/\(name)" }
            let overHTTP = Transport(name: "http://", hub: url(setup.hubName), gitHub: url(setup.gitHubName), relay: webRelay)
            rows += try oneChangeRows(setup, over: overHTTP)
            setup.step("removing its stores and hubs")
            return rows
        }
    }

    /// Where the one-change rows sync: Truce's hub and git's, both behind `relay`.
    private struct Transport {
        let name: String
        let hub: String, gitHub: String
        let relay: CountingRelay
    }

    /// One size's stores, hubs and clones: a writer filled by import (and `saveBatch` for the long histories), an empty
    /// reader, two empty hubs.
    private struct Setup {
        let documents: Int, versions: Int
        let writer: DocumentStore, reader: DocumentStore
        /// Truce's hub and git's, behind the relay, and where git's clone of Truce's hub goes.
        let hub: String, gitHub: String, mirror: String
        /// The hubs' directory names in the daemon's root.
        let hubName: String, gitHubName: String
        let directory: String
        let longDocument: DocumentKey, longHead: VersionID
        let relay: CountingRelay
        let step: Steps
        var label: String { "\(documents) documents (\(versions) versions)" }

        init(documents: Int, in directory: String, daemon: GitDaemon, relay: CountingRelay) throws {
            (self.documents, self.directory, self.relay) = (documents, directory, relay)
            step = Steps(label: "sync \(documents)")
            func served(_ name: String) throws -> String {
                _ = try daemon.makeHub(name)
                return "git://127.0.0.1:\(relay.port)/\(name)"
            }
            (hubName, gitHubName) = ("hub-\(documents).git", "git-hub-\(documents).git")
            (hub, gitHub, mirror) = (try served(hubName), try served(gitHubName), directory + "/mirror.git")
            step("importing \(documents) documents as truce import does, then the long histories with saveBatch")
            writer = try DocumentStore(directory: URL(fileURLWithPath: directory + "/writer"), mode: .createNew)
            reader = try DocumentStore(directory: URL(fileURLWithPath: directory + "/reader"), mode: .createNew)
            var random = SeededRandom(seed: 0x5_1C)
            // The documents as `truce import -` reads them: fast-import's `M 100644 inline` records.
            var stream = Data()
            for key in 0..<documents {
                let content = Data(Corpus.lines(2, &random).joined().utf8)
                stream += Data("M 100644 inline \(StoreRows.key(key).rawValue)\ndata \(content.count)\n".utf8) + content + Data("\n".utf8)
            }
            let imported = try writer.importDocumentsOnCallingThread(from: .stream(stream), device: "bench", date: StoreRows.start)
            var saves: [BatchSave] = []
            for version in 1..<SyncRows.longHistoryVersions {
                saves += (0..<SyncRows.longHistories).map { key in
                    BatchSave(
                        key: StoreRows.key(key), content: Data(Corpus.lines(2, &random).joined().utf8), device: "bench",
                        date: StoreRows.start.addingTimeInterval(Double(documents + version * SyncRows.longHistories + key)))
                }
            }
            // Dates from a fixed start, a second apart: ahead of the clock once the history is long, on purpose.
            let ids = try writer.saveBatchOnCallingThread(saves, allowingFutureDates: true)
            (versions, longDocument, longHead) = (imported.newVersions + saves.count, StoreRows.key(0), ids[saves.count - SyncRows.longHistories])
        }
    }

    /// The writer's first sync fills Truce's hub; the reader's first sync copies it into a new store, against
    /// `git clone --mirror` of the same hub (time and disk). The mirror then fills git's hub, for the rows after.
    private static func initialRows(_ setup: Setup) throws -> [Row] {
        setup.step("initial push into the empty hub")
        var pushed: SyncReport?
        let push = try setup.relay.measure { pushed = try setup.writer.syncOnCallingThread(with: setup.hub) }
        setup.step("git clone --mirror of the hub")
        let clone = try setup.relay.measure { try git(["clone", "-q", "--mirror", setup.hub, setup.mirror]) }
        setup.step("git push --mirror into git's empty hub")
        let gitPush = try setup.relay.measure { try git(["-C", setup.mirror, "push", "-q", "--mirror", setup.gitHub]) }
        setup.step("initial sync into an empty store")
        var received: SyncReport?
        let initial = try setup.relay.measure { received = try setup.reader.syncOnCallingThread(with: setup.hub) }
        let complete = received?.receivedCount == setup.versions
        let disk = diskKiB(setup.reader.path), mirrorDisk = diskKiB(setup.mirror)
        let time = initial.seconds / clone.seconds, space = Double(disk) / Double(mirrorDisk)
        return [
            Row(
                work: "initial push of \(setup.label) into an empty hub (\(pushed?.sent ?? 0) sent)",
                truce: "\(format(push.seconds)), \(format(bytes: push.bytes))",
                baseline: "git push --mirror: \(format(gitPush.seconds)), \(format(bytes: gitPush.bytes))",
                ratio: push.seconds / gitPush.seconds, target: "(reference; hub complete)", met: complete),
            Row(
                work: "initial sync of \(setup.label) into an empty store (\(received?.receivedCount ?? 0) received)",
                truce: format(initial.seconds), baseline: "git clone --mirror: \(format(clone.seconds))",
                ratio: time, target: "≤ 3× git's time", met: complete && time <= 3),
            Row(
                work: "  the same: disk afterwards (du -sk)", truce: String(format: "%.1f MiB", Double(disk) / 1024),
                baseline: String(format: "the mirror: %.1f MiB", Double(mirrorDisk) / 1024),
                ratio: space, target: "≤ 2× the mirror", met: complete && space <= 2),
        ]
    }

    /// A sync that brings nothing against `git fetch` of one ref of the hub into its mirror, which brings nothing either.
    private static func noOpRows(_ setup: Setup) throws -> [Row] {
        setup.step("no-op syncs against git fetch of one ref")
        let syncs = try repeated {
            var report: SyncReport?
            let measured = try setup.relay.measure { report = try setup.reader.syncOnCallingThread(with: setup.hub) }
            return (measured, traffic: (report?.traffic).map(packBytes) ?? 0, empty: report?.receivedCount == 0 && report?.sent == 0)
        } seconds: {
            $0.0.seconds
        }
        let ref = try git(["-C", setup.mirror, "for-each-ref", "--count=1", "--format=%(refname)"])
        let fetches = try repeated {
            try setup.relay.measure { try git(["-C", setup.mirror, "fetch", "-q", setup.hub, "\(ref):\(ref)"]) }
        } seconds: {
            $0.seconds
        }
        let empty = !ref.isEmpty && syncs.allSatisfy(\.empty)
        let time = median(syncs.map(\.0.seconds)) / median(fetches.map(\.seconds))
        let bytes = median(syncs.map(\.0.bytes)) / median(fetches.map(\.bytes))
        let work = "no-op sync, hub and store of \(setup.label), median of \(syncs.count)"
        return [
            Row(
                work: work, truce: format(median(syncs.map(\.0.seconds))),
                baseline: "git fetch of one ref: \(format(median(fetches.map(\.seconds))))",
                ratio: time, target: "≤ 2× git's time", met: empty && time <= 2),
            Row(
                work: "  the same: bytes on the wire (SyncReport.traffic: \(format(bytes: median(syncs.map(\.traffic)))))",
                truce: format(bytes: median(syncs.map(\.0.bytes))), baseline: "git fetch of one ref: \(format(bytes: median(fetches.map(\.bytes))))",
                ratio: bytes, target: "≤ 2× git's bytes", met: empty && bytes <= 2),
        ]
    }

    /// The writer saves one version of a long-history document and syncs, the reader syncs and gets it; against
    /// git pushing the same commit from a clone of the hub and git fetching it into another clone. The first sync of
    /// each store with the transport's hub is not measured: a hub copied to another server is new to the stores.
    private static func oneChangeRows(_ setup: Setup, over transport: Transport) throws -> [Row] {
        setup.step("one-change syncs over \(transport.name) against git push + git fetch of one commit")
        let clones = setup.directory + "/" + transport.name.filter(\.isLetter)
        let gitWriter = clones + "-git-writer.git", gitReader = clones + "-git-reader.git"
        for clone in [gitWriter, gitReader] { try git(["clone", "-q", "--mirror", setup.mirror, clone]) }
        // git's hub has the branch already when it is a copy from the transport before: both clones start where it is.
        if try git(["ls-remote", transport.gitHub, branch]).isEmpty {
            try git(["-C", gitWriter, "update-ref", branch, setup.longHead.hex])
            try git(["-C", gitWriter, "push", "-q", transport.gitHub, branch])
        }
        for clone in [gitWriter, gitReader] { try git(["-C", clone, "fetch", "-q", transport.gitHub, "+\(branch):\(branch)"]) }
        for store in [setup.writer, setup.reader] { _ = try store.syncOnCallingThread(with: transport.hub) }
        var random = SeededRandom(seed: 0x0C4A_9E)
        var round = 0
        let rounds = try repeated {
            round += 1
            let content = Data(Corpus.lines(2, &random).joined().utf8)
            let version = try setup.writer.save(
                content, to: setup.longDocument, device: "bench",
                date: StoreRows.start.addingTimeInterval(Double(10_000_000 + round)), allowingFutureDate: true)
            var sent: SyncReport?, received: SyncReport?
            let truce =
                try transport.relay.measure { sent = try setup.writer.syncOnCallingThread(with: transport.hub) }
                + transport.relay.measure { received = try setup.reader.syncOnCallingThread(with: transport.hub) }
            // The same commit into git's writer (locally, not measured), pushed to git's hub and fetched by git's reader.
            try git(["-C", setup.writer.path, "push", "-q", gitWriter, "\(version.id.hex):\(branch)"])
            let plain =
                try transport.relay.measure { try git(["-C", gitWriter, "push", "-q", transport.gitHub, branch]) }
                + transport.relay.measure { try git(["-C", gitReader, "fetch", "-q", transport.gitHub, "\(branch):\(branch)"]) }
            let gitReaderHead = try git(["-C", gitReader, "rev-parse", branch])
            let delivered = received?.received.map(\.version) == [version.id] && gitReaderHead == version.id.hex
            return (truce, git: plain, traffic: [sent, received].compactMap { $0?.traffic }.map(packBytes).reduce(0, +), delivered: delivered)
        } seconds: {
            $0.0.seconds
        }
        let bytes = median(rounds.map(\.0.bytes)) / median(rounds.map(\.git.bytes))
        return [
            Row(
                work: "one new version of a \(longHistoryVersions)-version document, synced up and down"
                    + "\(transport.name == "git://" ? "" : " over " + transport.name), \(setup.label), median of \(rounds.count) "
                    + "(SyncReport.traffic: \(format(bytes: median(rounds.map(\.traffic)))))",
                truce: "\(format(bytes: median(rounds.map(\.0.bytes)))) in \(format(median(rounds.map(\.0.seconds))))",
                baseline: "git push + git fetch: \(format(bytes: median(rounds.map(\.git.bytes)))) in \(format(median(rounds.map(\.git.seconds))))",
                ratio: bytes, target: "≤ 1.5× git's bytes", met: rounds.allSatisfy(\.delivered) && bytes <= 1.5)
        ]
    }

    /// Runs `measurement` `runs` times, or once when the first took longer than `cheapSeconds` by `seconds`.
    private static func repeated<T>(_ measurement: () throws -> T, seconds: (T) -> Double) rethrows -> [T] {
        var results = [try measurement()]
        while results.count < runs, seconds(results[0]) < cheapSeconds { results.append(try measurement()) }
        return results
    }

    private static func packBytes(_ traffic: SyncReport.Traffic) -> Int { traffic.sentBytes + traffic.receivedBytes }

    /// Runs git; its trimmed output, or an error with what it printed.
    @discardableResult
    private static func git(_ arguments: [String]) throws -> String {
        try runTool("/usr/bin/git", package: "git", arguments).output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The space a directory takes on disk, as `du -sk` counts it.
    private static func diskKiB(_ path: String) -> Int {
        Int(String(decoding: runChild("du", ["-sk", path]).output, as: UTF8.self).split(separator: "\t").first ?? "") ?? 0
    }
}

/// Progress on stderr, each step with the seconds since its size began: a full run takes long.
private struct Steps {
    let label: String
    let start = Date()

    func callAsFunction(_ text: String) {
        FileHandle.standardError.write(Data(String(format: "truce-bench: %@ [%.0f s]: %@\n", label, Date().timeIntervalSince(start), text).utf8))
    }
}

/// Formats a byte count for the table.
func format(bytes: Int) -> String {
    switch bytes {
    case ..<1000: "\(bytes) B"
    case ..<1_000_000: String(format: "%.1f KB", Double(bytes) / 1000)
    default: String(format: "%.2f MB", Double(bytes) / 1_000_000)
    }
}

/// Formats a median byte count for the table.
func format(bytes: Double) -> String { format(bytes: Int(bytes.rounded())) }
