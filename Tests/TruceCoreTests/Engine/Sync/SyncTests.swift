import Foundation
import Synchronization
import TestSupport
import Testing

@testable import TruceCore

/// Three stores stand for three devices.
@Suite(.timeLimit(.minutes(10))) struct SyncTests {
    static let base = "one\ntwo\nthree\nfour\nfive\nsix\n"

    /// Three replicas that each saved their own edit of notes/a.md from one base.
    static func threeEditedReplicas() throws -> [TestStore] {
        let replicas = try (0..<3).map { _ in try TestStore() }
        let start = Date(timeIntervalSince1970: 1_796_000_000)
        try replicas[0].store.save(.text(base), to: "notes/a.md", device: "device0", date: start)
        _ = try replicas[1].store.sync(with: replicas[0].path)
        _ = try replicas[2].store.sync(with: replicas[0].path)
        for (index, replica) in replicas.enumerated() {
            let edited = base.replacingOccurrences(of: ["one", "three", "five"][index], with: "EDIT\(index)")
            try replica.store.save(.text(edited), to: "notes/a.md", device: "device\(index)", date: start.addingTimeInterval(Double(index + 1) * 60))
        }
        return replicas
    }

    static func heads(_ replica: TestStore) throws -> [VersionID] {
        try replica.store.versions(of: "notes/a.md").heads.map(\.id)
    }

    @Test(arguments: [
        [(0, 1), (1, 2), (0, 2)], [(0, 1), (0, 2), (1, 2)], [(1, 2), (0, 1), (0, 2)],
        [(1, 2), (0, 2), (0, 1)], [(0, 2), (0, 1), (1, 2)], [(0, 2), (1, 2), (0, 1)],
    ])
    func everyReplicaAgreesOnCurrentAndConflictsInAnySyncOrder(order: [(Int, Int)]) throws {
        let replicas = try Self.threeEditedReplicas()
        for (from, to) in order { _ = try replicas[from].store.sync(with: replicas[to].path) }
        let views = try replicas.map { try $0.store.versions(of: "notes/a.md") }
        #expect(views.allSatisfy { $0.state == .inConflict && $0.heads.count == 3 })
        #expect(Set(views.map { $0.current!.id }).count == 1)
        #expect(Set(views.map { $0.conflicts.map(\.id) }).count == 1)
        #expect(Set(views.map { $0.base?.id }).count == 1)
        #expect(views[0].current?.deviceName == "device2")
        for replica in replicas { #expect(try replica.git("fsck", "--strict", "--no-dangling").isEmpty) }
    }

    @Test func oneResolutionSettlesEveryReplicaAndNothingComesBack() async throws {
        let replicas = try Self.threeEditedReplicas()
        _ = try await replicas[0].store.sync(with: replicas[1].path)
        _ = try await replicas[1].store.sync(with: replicas[2].path)
        _ = try await replicas[0].store.sync(with: replicas[2].path)
        let resolution = try await #require(replicas[1].store.resolve("notes/a.md", to: .text("settled\n"), device: "device1").version)
        _ = try await replicas[1].store.sync(with: replicas[0].path)
        _ = try await replicas[2].store.sync(with: replicas[0].path)
        for replica in replicas {
            #expect(try Self.heads(replica) == [resolution.id])
        }
        // Later syncs in every direction never bring a resolved version back as a conflict.
        for (from, to) in [(2, 1), (0, 2), (1, 0), (2, 0)] { _ = try await replicas[from].store.sync(with: replicas[to].path) }
        for replica in replicas {
            #expect(try replica.store.state(of: "notes/a.md") == .settled)
            #expect(try replica.store.contents(of: "notes/a.md") == .text("settled\n"))
        }
    }

    @Test func twoDifferentResolutionsAreTheNewConflictEverywhere() async throws {
        let replicas = try Self.threeEditedReplicas()
        _ = try await replicas[0].store.sync(with: replicas[1].path)
        _ = try await replicas[0].store.sync(with: replicas[2].path)
        _ = try await replicas[1].store.sync(with: replicas[0].path)
        let first = try await #require(replicas[0].store.resolve("notes/a.md", to: .text("zero's\n"), device: "device0").version)
        let second = try await #require(replicas[1].store.resolve("notes/a.md", to: .text("one's\n"), device: "device1").version)
        _ = try await replicas[0].store.sync(with: replicas[1].path)
        _ = try await replicas[2].store.sync(with: replicas[0].path)
        let views = try replicas.map { try $0.store.versions(of: "notes/a.md") }
        for view in views {
            #expect(Set(view.heads.map(\.id)) == [first.id, second.id])
            #expect(view.current?.id == views[0].current?.id)
        }
        let settled = try await #require(replicas[2].store.resolve("notes/a.md", to: .text("final\n"), device: "device2").version)
        _ = try await replicas[2].store.sync(with: replicas[0].path)
        _ = try await replicas[2].store.sync(with: replicas[1].path)
        for replica in replicas { #expect(try Self.heads(replica) == [settled.id]) }
    }

    @Test func editingALoserResolvedElsewhereMakesAConflictWhoseBaseIsThatLoser() async throws {
        let replicas = try Self.threeEditedReplicas()
        _ = try await replicas[0].store.sync(with: replicas[1].path)  // both hold the edits of 0 and 1
        let loser = try #require(try replicas[0].store.versions(of: "notes/a.md").heads.first { $0.deviceName == "device0" })
        let resolution = try await #require(replicas[1].store.resolve("notes/a.md", to: .text(Self.base), device: "device1").version)
        let edit = try replicas[0].store.save(.text("kept editing\n"), to: "notes/a.md", device: "device0", base: loser.id)
        _ = try await replicas[0].store.sync(with: replicas[1].path)
        for replica in replicas.prefix(2) {
            let view = try replica.store.versions(of: "notes/a.md")
            #expect(Set(view.heads.map(\.id)) == [resolution.id, edit.id])
            #expect(view.base?.id == loser.id)
        }
    }

    @Test func syncReportsConflictsAsEventsAndInTheChangeHistory() async throws {
        let replicas = try Self.threeEditedReplicas()
        let events = replicas[0].store.events
        let before = try replicas[0].store.changes().token
        let report = try await replicas[0].store.sync(with: replicas[1].path)
        #expect(report.received.map(\.author) == ["device1"])
        #expect(report.sent == 1)
        #expect(report.inConflict == ["notes/a.md"])
        let later = try replicas[0].store.changes(since: before)
        #expect(later.changes.map(\.author) == ["device1"])
        let received = try await firstElements(1, of: events, waitingFor: "the sync's state change")
        #expect(received.map { "\($0.key) \($0.becameInConflict)" } == ["notes/a.md true"])
    }

    @Test func syncTakesNoConfigOrAttributesFromTheOtherSide() async throws {
        let local = try TestStore()
        let remote = try TestStore()
        try remote.store.save(.text("x\n"), to: "a.rs", device: "remote")
        try remote.setAttributes("*.rs merge=evil\n")
        try remote.setConfig("merge.evil.driver", "touch /tmp/truce-evil-%A")
        let config = try String(contentsOfFile: local.path + "/config", encoding: .utf8)
        let attributes = try String(contentsOfFile: local.path + "/info/attributes", encoding: .utf8)
        _ = try await local.store.sync(with: remote.path)
        #expect(try local.store.contents(of: "a.rs") == .text("x\n"))
        #expect(try String(contentsOfFile: local.path + "/config", encoding: .utf8) == config)
        #expect(try String(contentsOfFile: local.path + "/info/attributes", encoding: .utf8) == attributes)
    }

    @Test func aRemoteThatIsMissingOrNeitherAStoreNorABareRepositoryIsRefusedAndChangesNothing() async throws {
        let local = try TestStore()
        try local.store.save(.text("x\n"), to: "a.txt", device: "local")
        let directory = TemporaryDirectory()
        let before = snapshot(ofStore: local.path)
        #expect(try git("init", "-q", directory.file("worktree")).status == 0)
        for remote in [directory.file("missing"), directory.file("worktree"), "file://" + directory.file("missing"), directory.path] {
            #expect {
                try local.store.sync(with: remote)
            } throws: { error in
                guard case .invalidRemote(let named, _) = error as? TruceError else { return false }
                return named == remote
            }
        }
        #expect(snapshot(ofStore: local.path) == before)
    }

    /// A remote whose head ref of a b.txt version sits in a.txt's directory; with `realHeadFirst` set, beside a real
    /// a.txt head whose ref sorts before it (nil: no a.txt at all), else after it. Returns a.txt's versions, oldest first.
    static func remoteWithAMisplacedHead(realHeadFirst: Bool?) throws -> (remote: TestStore, a: [Version], b: Version) {
        let remote = try TestStore()
        let b = try remote.store.save(.text("b\n"), to: "b.txt", device: "remote").version
        var a: [Version] = []
        if let realHeadFirst {
            // Refs list in name order, so the ids' order decides which of the two a reader meets first.
            repeat {
                a.append(try remote.store.save(.text("a\(a.count)\n"), to: "a.txt", device: "remote", base: a.last?.id).version)
            } while (a.last!.id < b.id) != realHeadFirst
        }
        _ = try remote.git("update-ref", "-d", ReferenceLayout.headReference(of: "b.txt", version: b.id))
        _ = try remote.git("update-ref", ReferenceLayout.headReference(of: "a.txt", version: b.id), b.id.hex)
        return (remote, a, b)
    }

    @Test func aRemoteHeadInTheDirectoryOfAnotherDocumentIsNotAdopted() async throws {
        let (remote, _, b) = try Self.remoteWithAMisplacedHead(realHeadFirst: nil)
        let local = try TestStore()
        let remoteBefore = snapshot(ofStore: remote.path)
        let report = try await local.store.sync(with: remote.path)
        #expect(report.received.isEmpty, "\(report.received)")
        #expect(report.sent == 0)
        #expect(try local.git("for-each-ref", "refs/truce").isEmpty)
        #expect(try local.store.state(of: "b.txt") == .absent)
        #expect(try local.store.state(of: "a.txt") == .absent)
        #expect(try local.store.changes().changes.isEmpty)
        #expect(snapshot(ofStore: remote.path) == remoteBefore, "the remote changed")
        #expect(
            try remote.git("for-each-ref", "--format=%(refname) %(objectname)", "refs/truce/heads")
                == ReferenceLayout.headReference(of: "a.txt", version: b.id) + " " + b.id.hex + "\n")
    }

    @Test(arguments: [true, false])
    func aMisplacedHeadBesideARealOneIsRefusedAndTheRealOneAdopted(realHeadFirst: Bool) async throws {
        let (remote, a, b) = try Self.remoteWithAMisplacedHead(realHeadFirst: realHeadFirst)
        let local = try TestStore()
        let remoteBefore = snapshot(ofStore: remote.path)
        // The remote's own a.txt is damaged, so taking this store's a.txt back fails, and says so; this store is whole.
        #expect(throws: TruceError.invalidRemote(remote.path, reason: "its head \(b.id.short) of 'a.txt' is a version of 'b.txt'")) {
            try local.store.sync(with: remote.path)
        }
        #expect(try local.store.changes().changes.map(\.version) == a.map(\.id))
        #expect(try local.store.versions(of: "a.txt").heads.map(\.id) == [a.last?.id])
        #expect(try local.store.state(of: "b.txt") == .absent)
        #expect(try local.git("for-each-ref", "--format=%(objectname)", "refs/truce").contains(b.id.hex) == false)
        #expect(try local.git("fsck", "--strict", "--no-dangling").isEmpty)
        #expect(snapshot(ofStore: remote.path) == remoteBefore, "the remote changed")
    }

    @Test func aRemoteVersionWhoseHistoryHoldsAnotherDocumentIsRefusedBeforeAnythingIsAdopted() async throws {
        let remote = try TestStore()
        let b = try remote.store.save(.text("b\n"), to: "b.txt", device: "remote")
        let a = try remote.store.save(.text("a\n"), to: "a.txt", device: "remote")
        // A well-formed a.txt version, but made on top of the b.txt version.
        let tree = try remote.git("rev-parse", a.id.hex + "^{tree}").trimmingCharacters(in: .whitespacesAndNewlines)
        let message = try remote.git("log", "-1", "--format=%B", a.id.hex)
        let forged = try git(["-C", remote.path, "commit-tree", tree, "-p", b.id.hex], input: .text(message)).output
            .trimmingCharacters(in: .whitespacesAndNewlines)
        _ = try remote.git("update-ref", "-d", ReferenceLayout.headReference(of: "a.txt", version: a.id))
        _ = try remote.git("update-ref", ReferenceLayout.headsDirectory(of: "a.txt") + forged, forged)
        let local = try TestStore()
        let remoteBefore = snapshot(ofStore: remote.path)
        // The forged head is refused by name; the checks run before any head of a.txt is adopted.
        let report = try await local.store.sync(with: remote.path)
        #expect(report.refused.map(\.version) == [VersionID(hex: forged)!], "\(report.refused)")
        #expect(report.refused.map(\.manifest) == [nil], "a version is refused as a version, not as a manifest")
        #expect(report.refused.first?.hex == forged)
        #expect(report.refused.first?.reason.contains("b.txt") == true, "\(report.refused)")
        // b.txt's own head may or may not have come first; nothing of a.txt did.
        #expect(try local.git("for-each-ref", ReferenceLayout.headsDirectory(of: "a.txt")).isEmpty)
        #expect(try local.store.state(of: "a.txt") == .absent)
        #expect(try local.store.changes().changes.allSatisfy { $0.key == "b.txt" })
        #expect(snapshot(ofStore: remote.path) == remoteBefore, "the remote changed")
    }

    /// `source` itself, or a hub on a git daemon that `source` synced with (the daemon runs as long as it is held).
    static func remote(holding source: TestStore, throughHub: Bool) throws -> (String, GitDaemon?) {
        guard throughHub else { return (source.path, nil) }
        let daemon = try GitDaemon()
        let hub = try daemon.makeHub()
        _ = try source.store.sync(with: hub)
        return (hub, daemon)
    }

    /// A sync killed after it brought a head in, before it adopted it, then a prune killed while it deleted those
    /// unreachable objects, can leave a copy of the head without its parents. Holding the commit is no proof of its
    /// history: the next sync checks and brings that history, from another store or through a hub.
    @Test(arguments: [false, true], [false, true])
    func aStoreHoldingAnIncompleteCopyOfAHeadStillAdoptsIt(throughHub: Bool, withLocalHead: Bool) async throws {
        let source = try TestStore(), target = try TestStore()
        let first = try source.store.save(.text("one\n"), to: "notes/a.md", device: "source")
        if withLocalHead { _ = try await target.store.sync(with: source.path) }
        let second = try source.store.save(.text("two\n"), to: "notes/a.md", device: "source")
        let third = try source.store.save(.text("three\n"), to: "notes/a.md", device: "source")
        // The head, its tree and its file, loose and unreachable, without the version before it.
        for object in try source.git("ls-tree", "-r", "-t", "--format=%(objectname)", third.id.hex).split(separator: "\n").map(String.init)
            + [third.id.hex, try source.git("rev-parse", third.id.hex + "^{tree}").trimmingCharacters(in: .whitespacesAndNewlines)]
        {
            let type = try source.git("cat-file", "-t", object).trimmingCharacters(in: .whitespacesAndNewlines)
            let bytes = try git(["-C", source.path, "cat-file", type, object]).stdout
            let written = try git(["-C", target.path, "hash-object", "-w", "--literally", "-t", type, "--stdin"], input: bytes)
            #expect(written.output.hasPrefix(object))
        }
        #expect(try git(["-C", target.path, "cat-file", "-e", second.id.hex]).status != 0)
        let (remote, daemon) = try Self.remote(holding: source, throughHub: throughHub)
        defer { withExtendedLifetime(daemon) {} }

        let report = try await target.store.sync(with: remote)
        #expect(report.refused.isEmpty, "\(report.refused)")
        #expect(try target.store.versions(of: "notes/a.md").heads.map(\.id) == [third.id])
        #expect(try target.store.contents(of: "notes/a.md") == .text("three\n"))
        let history = try target.git("log", "--format=%H", third.id.hex).split(separator: "\n").map(String.init)
        #expect(history == [third.id.hex, second.id.hex, first.id.hex])
        #expect(try target.git("fsck", "--strict", "--no-dangling").isEmpty)
    }

    /// A prune removes a pack before its index: killed between the two, it leaves an index whose pack is gone, which git
    /// and libgit2 ignore. The objects it lists are not in the store, and a sync that needs them brings them.
    @Test(arguments: [false, true])
    func aPackIndexLeftWithoutItsPackHoldsNothing(throughHub: Bool) async throws {
        let source = try TestStore(), target = try TestStore()
        let first = try source.store.save(.text("one\n"), to: "notes/a.md", device: "source")
        let second = try source.store.save(.text("two\n"), to: "notes/a.md", device: "source")
        let third = try source.store.save(.text("three\n"), to: "notes/a.md", device: "source")
        // The first two versions in a pack of the target that a prune deleted, all but its index.
        let packs = try target.git("rev-parse", "--absolute-git-dir").trimmingCharacters(in: .whitespacesAndNewlines) + "/objects/pack/"
        let objects = try source.git("rev-list", "--objects", second.id.hex).split(separator: "\n").map { String($0.prefix(40)) }
        let packed = try git(
            ["-C", source.path, "pack-objects", "-q", packs + "pack"],
            input: .text(objects.joined(separator: "\n") + "\n")
        ).output.trimmingCharacters(in: .whitespacesAndNewlines)
        let pack = packs + "pack-" + packed
        #expect(FileManager.default.fileExists(atPath: pack + ".idx"))
        try FileManager.default.removeItem(atPath: pack + ".pack")
        #expect(try git(["-C", target.path, "cat-file", "-e", first.id.hex]).status != 0)
        let (remote, daemon) = try Self.remote(holding: source, throughHub: throughHub)
        defer { withExtendedLifetime(daemon) {} }

        #expect(try await target.store.sync(with: remote).refused.isEmpty)
        #expect(try target.git("log", "--format=%H", third.id.hex).split(separator: "\n").map(String.init) == [third, second, first].map(\.id.hex))
        #expect(try target.git("fsck", "--strict", "--no-dangling").isEmpty)
        // The next prune takes the index away with the other leftovers.
        _ = try await target.store.prune(expire: 0)
        #expect(!FileManager.default.fileExists(atPath: pack + ".idx"))
    }

    /// What a sync's progress closure heard, in order.
    final class Reports: Sendable {
        private let heard = Mutex<[SyncReport.Traffic]>([])
        func add(_ traffic: SyncReport.Traffic) { heard.withLock { $0.append(traffic) } }
        var all: [SyncReport.Traffic] { heard.withLock { $0 } }
    }

    /// A store of `documents` documents (`d/<n>.txt`) that has pushed them to a new hub on a local path, and the hub.
    private func writerPushed(_ documents: Int) async throws -> (writer: TestStore, hub: BareRepository) {
        let writer = try TestStore()
        _ = try await writer.store.saveBatch(
            (0..<documents).map { BatchSave(key: DocumentKey(stringLiteral: "d/\($0).txt"), content: .text("\($0)\n")) })
        let hub = try BareRepository("truce-pushed-hub")
        _ = try await writer.store.sync(with: hub.path)
        return (writer, hub)
    }

    /// A first sync says how far its checks and its writing are, not only what moved on the wire: a sync from a local
    /// hub moves nothing over one, and those steps are all its time.
    @Test func aFirstSyncReportsTheHeadsItChecksAndTheObjectsItStores() async throws {
        let (_, hub) = try await writerPushed(300)

        let replica = try TestStore()
        let reports = Reports()
        let report = try await replica.store.sync(with: hub.path) { reports.add($0) }
        let seen = reports.all
        #expect(report.received.count == 300)
        let last = try #require(seen.last)
        #expect(last.headsChecked == 300 && last.headsToCheck == 300, "\(last)")
        #expect(last.objectsToStore > 900 && last.objectsStored == last.objectsToStore, "\(last)")
        #expect(seen.contains { $0.headsToCheck == 300 && $0.headsChecked < 300 }, "no report while the checks ran")
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.headsChecked <= $1.headsChecked && $0.objectsStored <= $1.objectsStored })
        #expect(report.traffic == last)
    }

    /// A store that has pushed to a hub lists each of its heads twice to a sync straight from it: in its manifest and
    /// as its own head ref. Each version is adopted once, and the store holds it once (adoption folds a head listed
    /// twice: this holds the outcome, not the listing's skip of the second check's admission).
    @Test func aHeadBothAManifestAndAHeadRefListIsAdoptedOnce() async throws {
        let (writer, hub) = try await writerPushed(20)
        #expect(try git(["-C", writer.path, "for-each-ref", "refs/truce/replicas/"]).stdout.isEmpty == false)

        let replica = try TestStore()
        let report = try await replica.store.sync(with: writer.path)
        #expect(report.received.count == 20 && Set(report.received.map(\.version)).count == 20, "\(report.received.count) received")
        #expect(report.traffic.headsToCheck == 40 && report.traffic.documentsAdopted == 20, "\(report.traffic)")
        #expect(try replica.store.changes().changes.count == 20)
        withExtendedLifetime(hub) {}
    }

    /// Traffic written as JSON before the check and store counts existed still reads, with those counts 0.
    @Test func trafficWrittenBeforeTheCheckCountsReadsThemAsZero() throws {
        let old = #"{"receivedObjects":1,"receivedBytes":2,"sentObjects":3,"sentBytes":4,"documentsAdopted":5}"#
        let traffic = try JSONDecoder().decode(SyncReport.Traffic.self, from: Data(old.utf8))
        #expect(traffic.receivedBytes == 2 && traffic.documentsAdopted == 5)
        #expect(traffic.headsChecked == 0 && traffic.headsToCheck == 0 && traffic.objectsStored == 0 && traffic.objectsToStore == 0)
        var counted = traffic
        (counted.headsChecked, counted.headsToCheck, counted.objectsStored, counted.objectsToStore) = (6, 7, 8, 9)
        #expect(try JSONDecoder().decode(SyncReport.Traffic.self, from: JSONEncoder().encode(counted)) == counted)
    }
}

/// A sync killed after its push and before it kept the manifest it pushed.
@Suite(.timeLimit(.minutes(10))) struct UnkeptManifestTests {
    /// The writer's next manifest builds on the one it kept, with the pushed one's sequence again; a reader that read
    /// the pushed one still reads the next (it lists all the pushed one did, and more).
    @Test func aManifestPushedButNotKeptDoesNotHideTheNextOne() async throws {
        let bare = try BareRepository("truce-unkept-hub"), hub = bare.path
        let writer = try TestStore(), reader = try TestStore()
        try writer.store.save(.text("one\n"), to: "a.md", device: "writer")
        _ = try await writer.store.sync(with: hub)
        _ = try await reader.store.sync(with: hub)
        let replica = try writer.git("config", "truce.replica").trimmingCharacters(in: .whitespacesAndNewlines)
        let reference = "refs/truce/replicas/" + replica
        let kept = try writer.git("rev-parse", reference).trimmingCharacters(in: .whitespacesAndNewlines)
        try writer.store.save(.text("two\n"), to: "a.md", device: "writer")
        _ = try await writer.store.sync(with: hub)
        _ = try await reader.store.sync(with: hub)
        #expect(try reader.store.contents(of: "a.md") == .text("two\n"))
        // As if the sync had been killed before it kept what it pushed.
        _ = try writer.git("update-ref", reference, kept)
        try writer.store.save(.text("three\n"), to: "b.md", device: "writer")
        _ = try await writer.store.sync(with: hub)
        _ = try await reader.store.sync(with: hub)
        #expect(try reader.store.contents(of: "b.md") == .text("three\n"))
        #expect(try reader.store.contents(of: "a.md") == .text("two\n"))
    }
}
