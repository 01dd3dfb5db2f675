import Foundation
import TestSupport
import Testing

@testable import TruceCore
@testable import TruceGit

/// Sync through replica manifests, against a git daemon on 127.0.0.1 and plain bare repositories: what a hub holds,
/// what travels, and that nothing is lost on the way.
@Suite(.timeLimit(.minutes(10))) struct ManifestSyncTests {
    let daemon: GitDaemon

    init() throws { daemon = try GitDaemon() }

    /// The directory the daemon serves `url` from.
    private func hubPath(_ url: String) -> String { daemon.root + "/" + url.split(separator: "/").last! }

    private func hubRefs(_ url: String) throws -> [String] {
        try git("-C", hubPath(url), "for-each-ref", "--format=%(refname)").output.split(separator: "\n").map(String.init)
    }

    /// The manifest the hub's index lists for each replica (the newest), read with git: the entries of
    /// `refs/truce/hub` along first parents back to a snapshot, parts expanded, each listed commit's trailers.
    private func hubListing(_ url: String) throws -> [String: String] {
        let directory = hubPath(url)
        func lines(_ arguments: String...) throws -> [String] {
            try git(["-C", directory] + arguments).output.split(separator: "\n").map(String.init)
        }
        guard try git("-C", directory, "rev-parse", "-q", "--verify", HubIndex.reference).status == 0 else { return [:] }
        var newest: [String: (id: String, sequence: Int)] = [:]
        for entry in try lines("rev-list", "--first-parent", HubIndex.reference) {
            let parents = try lines("rev-list", "--parents", "-n", "1", entry)[0].split(separator: " ").dropFirst().map(String.init)
            let isSnapshot = try lines("log", "-1", "--format=%(trailers:key=Snapshot,valueonly)", entry).first == "yes"
            var listed = isSnapshot ? parents : Array(parents.dropFirst())
            while let commit = listed.popLast() {
                let fields = try lines("log", "-1", "--format=%s%n%(trailers:key=Replica,valueonly)%n%(trailers:key=Sequence,valueonly)", commit)
                if fields[0] == "Manifest part" {
                    listed += try lines("rev-list", "--parents", "-n", "1", commit)[0].split(separator: " ").dropFirst().map(String.init)
                } else if fields.count == 3, let sequence = Int(fields[2]), sequence > newest[fields[1]]?.sequence ?? -1 {
                    newest[fields[1]] = (commit, sequence)
                }
            }
            if isSnapshot { break }
        }
        return newest.mapValues(\.id)
    }

    private func expectHubFsckClean(_ url: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let fsck = try git("-C", hubPath(url), "fsck", "--strict", "--no-dangling")
        #expect(fsck.status == 0 && fsck.output.isEmpty, "\(fsck.output) \(fsck.errorOutput)", sourceLocation: sourceLocation)
    }

    /// git's protocol lists every ref of a hub on every fetch and push: a hub has one, its index, whatever the number of
    /// replicas, versions and syncs.
    @Test func aHubAdvertisesOneRefWhateverItsReplicasVersionsAndSyncs() throws {
        let hub = try daemon.makeHub()
        let laptop = try TestStore(), phone = try TestStore()
        for round in 0..<4 {
            for index in 0..<5 { try laptop.store.save(.text("laptop \(round) \(index)\n"), to: DocumentKey("notes/\(index).md"), device: "laptop") }
            try phone.store.save(.text("phone \(round)\n"), to: "phone.md", device: "phone")
            _ = try laptop.store.sync(with: hub)
            _ = try phone.store.sync(with: hub)
        }
        _ = try laptop.store.sync(with: hub)
        #expect(try hubRefs(hub) == [HubIndex.reference])
        #expect(try hubListing(hub).keys.sorted() == [replicaID(of: laptop), replicaID(of: phone)].sorted())
        for index in 0..<5 { #expect(try phone.store.contents(of: DocumentKey("notes/\(index).md")) == .text("laptop 3 \(index)\n")) }
        #expect(try laptop.store.contents(of: "phone.md") == .text("phone 3\n"))
        try expectHubFsckClean(hub)
    }

    @Test func aSyncThatBringsNothingMovesNoObjectsAndWritesNothing() throws {
        let hub = try daemon.makeHub()
        let laptop = try TestStore(), phone = try TestStore()
        try laptop.store.save(.text("one\n"), to: "a.md", device: "laptop")
        _ = try laptop.store.sync(with: hub)
        _ = try phone.store.sync(with: hub)
        _ = try laptop.store.sync(with: hub)
        let laptopBefore = snapshot(ofStore: laptop.path), phoneBefore = snapshot(ofStore: phone.path)
        for store in [laptop, phone] {
            let report = try store.store.sync(with: hub)
            #expect(report.received.isEmpty && report.sent == 0)
            #expect(report.traffic.receivedObjects == 0 && report.traffic.sentObjects == 0, "\(report.traffic)")
        }
        #expect(snapshot(ofStore: laptop.path) == laptopBefore)
        #expect(snapshot(ofStore: phone.path) == phoneBefore)
    }

    @Test func oneNewVersionOfALongHistoryBringsAHandfulOfObjects() throws {
        let hub = try daemon.makeHub()
        let laptop = try TestStore(), phone = try TestStore()
        for index in 0..<60 { try laptop.store.save(.text("version \(index)\n"), to: "notes/long.md", device: "laptop") }
        for index in 0..<30 { try laptop.store.save(.text("other \(index)\n"), to: DocumentKey("other/\(index).md"), device: "laptop") }
        _ = try laptop.store.sync(with: hub)
        _ = try phone.store.sync(with: hub)
        _ = try laptop.store.sync(with: hub)
        try laptop.store.save(.text("version 60\n"), to: "notes/long.md", device: "laptop")
        let sent = try laptop.store.sync(with: hub)
        #expect(sent.sent == 1)
        let report = try phone.store.sync(with: hub)
        #expect(report.received.map(\.key) == ["notes/long.md"])
        // The version's commit, its two trees and blob, and the laptop's manifest commit: not the 60 versions before.
        #expect(report.traffic.receivedObjects <= 6, "\(report.traffic)")
        // What the phone received came from this hub: it sends nothing back for it.
        #expect(report.traffic.sentObjects == 0, "\(report.traffic)")
        #expect(sent.traffic.sentObjects <= 6, "\(sent.traffic)")
        #expect(try phone.store.contents(of: "notes/long.md") == .text("version 60\n"))
    }

    @Test func aNewReplicasFirstManifestListsTheManifestItAdoptedFromNotEveryHead() throws {
        let hub = try daemon.makeHub()
        let laptop = try TestStore(), phone = try TestStore()
        for index in 0..<40 { try laptop.store.save(.text("\(index)\n"), to: DocumentKey("d/\(index).md"), device: "laptop") }
        _ = try laptop.store.sync(with: hub)
        #expect(try phone.store.sync(with: hub).received.count == 40)
        let phoneManifest = try #require(
            try phone.git(
                "for-each-ref", "--format=%(objectname)",
                ReplicaManifest.reference(of: replicaID(of: phone))
            ).split(separator: "\n").first)
        let parents = try phone.git("rev-list", "--parents", "-n", "1", String(phoneManifest)).split(separator: " ").dropFirst()
        let laptopManifest = try laptop.git("rev-parse", ReplicaManifest.reference(of: replicaID(of: laptop))).trimmingCharacters(
            in: .whitespacesAndNewlines)
        #expect(parents.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) } == [laptopManifest])
        // The phone's journal says so in one line, which is what its first manifest read instead of 40 changes.
        #expect(try phone.git("log", "-1", "--format=%(trailers:key=Via,valueonly)", ChangeJournal.reference) == laptopManifest + "\n\n")
        // The laptop reads that one commit and adopts nothing.
        let back = try laptop.store.sync(with: hub)
        #expect(back.received.isEmpty)
        #expect(back.traffic.receivedObjects <= 2, "\(back.traffic)")
    }

    @Test func aNewReplicaAmongManyCopiesTheirManifestsInOneRewriteAndThenReadsNothing() throws {
        let hub = try daemon.makeHub()
        for index in 0..<10 {
            let device = try TestStore()
            try device.store.save(.text("\(index)\n"), to: DocumentKey("r/\(index).md"), device: "device\(index)")
            _ = try device.store.sync(with: hub)
        }
        let others = try hubListing(hub).map { "\(ReplicaManifest.reference(of: $0.key)) \($0.value)" }.sorted()
        #expect(others.count == 10)
        let newcomer = try TestStore()
        #expect(try newcomer.store.sync(with: hub).received.count == 10)
        // Its copies are the hub's manifests, as packed lines: no loose copy was written.
        let own = ReplicaManifest.reference(of: try replicaID(of: newcomer))
        let copies = try newcomer.git("for-each-ref", "--format=%(refname) %(objectname)", ReplicaManifest.root)
            .split(separator: "\n").filter { !$0.hasPrefix(own) }
        #expect(copies.map(String.init) == others)
        let packed = try String(contentsOfFile: newcomer.path + "/packed-refs", encoding: .utf8)
        for copy in copies { #expect(packed.contains(copy.split(separator: " ")[0]), "\(copy) is not packed") }
        #expect(!FileManager.default.fileExists(atPath: newcomer.path + "/" + String(copies[0].split(separator: " ")[0])))
        // The copies count as read: the next sync reads no manifest again and adopts nothing.
        let again = try newcomer.store.sync(with: hub)
        #expect(again.received.isEmpty)
        #expect(again.traffic.receivedObjects == 0, "\(again.traffic)")
        let fsck = try newcomer.git("fsck", "--strict", "--no-dangling")
        #expect(fsck.isEmpty, "\(fsck)")
    }

    /// Replicas that only joined relay nothing of their own: a newcomer's first manifest lists the manifests its
    /// versions came through, not every replica's, so that neither it nor the hub grows with the replicas before it.
    @Test func aNewcomersFirstManifestListsTheManifestsItsVersionsCameThroughNotEveryReplicas() throws {
        let hub = try daemon.makeHub()
        let writer = try TestStore()
        for index in 0..<5 { try writer.store.save(.text("\(index)\n"), to: DocumentKey("w/\(index).md"), device: "writer") }
        _ = try writer.store.sync(with: hub)
        let joined = try (0..<12).map { _ in try TestStore() }
        for replica in joined { _ = try replica.store.sync(with: hub) }
        #expect(try hubListing(hub).count == 13 && hubRefs(hub) == [HubIndex.reference])
        let newcomer = try TestStore()
        #expect(try newcomer.store.sync(with: hub).received.count == 5)
        let own = ReplicaManifest.reference(of: try replicaID(of: newcomer))
        let parents = try newcomer.git("rev-list", "--parents", "-n", "1", own).split(separator: " ").dropFirst()
        #expect(!parents.isEmpty && parents.count <= 2, "its first manifest lists \(parents.count) manifests of 13 replicas")
        // What it lists still reaches every version: a replica that reads its chain alone gets them all.
        let other = try TestStore()
        _ = try other.store.sync(with: newcomer.path)
        for index in 0..<5 { #expect(try other.store.contents(of: DocumentKey("w/\(index).md")) == .text("\(index)\n")) }
        try expectHubFsckClean(hub)
    }

    /// A newcomer may adopt a version through an earlier manifest of a replica than the copy it keeps (one that another
    /// replica relays, read first): its first manifest still lists the manifests its versions came through, and does not
    /// read every replica's chain to find the heads they miss.
    @Test func aNewcomerListsTheEarlierManifestItsVersionsCameThrough() throws {
        let hub = try daemon.makeHub()
        let writer = try TestStore(), joined = try TestStore(), newcomer = try TestStore()
        for index in 0..<5 { try writer.store.save(.text("\(index)\n"), to: DocumentKey("w/\(index).md"), device: "writer") }
        _ = try writer.store.sync(with: hub)
        _ = try joined.store.sync(with: hub)
        try writer.store.save(.text("changed\n"), to: "w/0.md", device: "writer")
        _ = try writer.store.sync(with: hub)
        try joined.store.save(.text("joined\n"), to: "j.md", device: "joined")
        _ = try joined.store.sync(with: hub)
        #expect(try newcomer.store.sync(with: hub).received.count == 7)
        let via = Set(
            try newcomer.git("log", "--format=%(trailers:key=Via,valueonly,separator= )", ChangeJournal.reference)
                .split(whereSeparator: \.isWhitespace).map(String.init))
        let own = try ownManifest(of: newcomer)
        let parents = try newcomer.git("rev-list", "--parents", "-n", "1", own).split(whereSeparator: \.isWhitespace).dropFirst().map(String.init)
        #expect(via.count == 3, "the versions came through the writer's two manifests and the joined replica's: \(via)")
        #expect(Set(parents) == via)
        let other = try TestStore()
        _ = try other.store.sync(with: newcomer.path)
        #expect(try other.store.contents(of: "w/0.md") == .text("changed\n") && other.store.contents(of: "j.md") == .text("joined\n"))
        try expectHubFsckClean(hub)
    }

    /// A sync that brings nothing reads no more commits with 22 replicas on the hub than with 2: the manifests it saw
    /// last are not read again (counts, not timings).
    @Test func aSyncThatBringsNothingReadsTheSameWhateverTheNumberOfReplicas() throws {
        let hub = try daemon.makeHub()
        let writer = try TestStore(), reader = try TestStore()
        try writer.store.save(.text("w\n"), to: "w.md", device: "writer")
        _ = try writer.store.sync(with: hub)
        _ = try reader.store.sync(with: hub)
        func commitsReadByANoOpSync() throws -> Int {
            let before = reader.store.instrumentation.commitsRead
            let report = try reader.store.sync(with: hub)
            #expect(report.received.isEmpty && report.sent == 0)
            return reader.store.instrumentation.commitsRead - before
        }
        let withTwo = try commitsReadByANoOpSync()
        let joined = try (0..<20).map { _ in try TestStore() }
        for replica in joined { _ = try replica.store.sync(with: hub) }
        _ = try reader.store.sync(with: hub)
        let withMany = try commitsReadByANoOpSync()
        #expect(withMany == withTwo, "a no-op sync read \(withTwo) commits with 2 replicas, \(withMany) with 22")
    }

    /// One change synced up and down reads the same commits with 22 replicas on the hub as with 2: each side reads
    /// the index from the entry it read last, and the hub advertises one ref (counts, not timings). Two hubs, the same
    /// syncs on each, 20 more replicas joining one of them.
    @Test func oneChangeSyncedReadsTheSameWhateverTheNumberOfReplicas() throws {
        func commitsReadByOneChange(joining: Int) throws -> (up: Int, down: Int) {
            let hub = try daemon.makeHub("hub-\(joining).git")
            let writer = try TestStore(), reader = try TestStore()
            try writer.store.save(.text("w\n"), to: "w.md", device: "writer")
            _ = try writer.store.sync(with: hub)
            _ = try reader.store.sync(with: hub)
            for _ in 0..<joining {
                let joined = try TestStore()
                _ = try joined.store.sync(with: hub)
            }
            _ = try writer.store.sync(with: hub)
            _ = try reader.store.sync(with: hub)
            try writer.store.save(.text("changed\n"), to: "w.md", device: "writer")
            let (writerBefore, readerBefore) = (writer.store.instrumentation.commitsRead, reader.store.instrumentation.commitsRead)
            #expect(try writer.store.sync(with: hub).sent == 1)
            #expect(try reader.store.sync(with: hub).received.map(\.key) == ["w.md"])
            #expect(try hubRefs(hub) == [HubIndex.reference] && hubListing(hub).count == joining + 2)
            try expectHubFsckClean(hub)
            return (writer.store.instrumentation.commitsRead - writerBefore, reader.store.instrumentation.commitsRead - readerBefore)
        }
        let withTwo = try commitsReadByOneChange(joining: 0), withMany = try commitsReadByOneChange(joining: 20)
        #expect(withMany == withTwo, "one change read \(withTwo) commits with 2 replicas, \(withMany) with 22")
    }

    /// A replica that only receives has nothing to push: the hub holds all it received, and its copy of the index says
    /// up to which entry of its journal, so neither the sync that brings a change nor the one after it pushes.
    @Test(arguments: HubAccess.allCases) func aReplicaThatOnlyReceivesPushesNothing(_ access: HubAccess) throws {
        let hub = try makeHub(access)
        let writer = try TestStore(), reader = try TestStore()
        try writer.store.save(.text("0\n"), to: "w.md", device: "writer")
        _ = try writer.store.sync(with: hub)
        _ = try reader.store.sync(with: hub)
        for round in 1...3 {
            try writer.store.save(.text("\(round)\n"), to: "w.md", device: "writer")
            _ = try writer.store.sync(with: hub)
            let index = try hubReference(HubIndex.reference, in: hub)
            for expected in [["w.md"], []] as [[DocumentKey]] {
                let report = try reader.store.sync(with: hub)
                #expect(report.received.map(\.key) == expected && report.sent == 0, "round \(round): \(report)")
                #expect(report.traffic.sentObjects == 0, "round \(round): \(report.traffic)")
                #expect(try hubReference(HubIndex.reference, in: hub) == index, "round \(round): the reader moved the index")
            }
        }
        #expect(try reader.store.contents(of: "w.md") == .text("3\n"))
    }

    /// Two replicas push at once: the index moves only from the value the hub advertised, so the one that pushes second
    /// is refused, receives what the first pushed, and pushes again. The index lists both; nothing is lost.
    @Test(arguments: HubAccess.allCases) func aReplicaThatPushesSecondReceivesAgainAndTheIndexKeepsBoth(_ access: HubAccess) throws {
        let hub = try makeHub(access)
        let laptop = try TestStore(), phone = try TestStore()
        try laptop.store.save(.text("laptop\n"), to: "laptop.md", device: "laptop")
        _ = try laptop.store.sync(with: hub)
        _ = try phone.store.sync(with: hub)
        try laptop.store.save(.text("laptop again\n"), to: "laptop.md", device: "laptop")
        try phone.store.save(.text("phone\n"), to: "phone.md", device: "phone")
        // The laptop's whole sync lands between the phone's receive and its push, once.
        phone.store.instrumentation.beforePushing {
            phone.store.instrumentation.beforePushing(nil)
            _ = try? laptop.store.sync(with: hub)
        }
        let report = try phone.store.sync(with: hub)
        #expect(report.received.map(\.key) == ["laptop.md"] && report.sent == 1, "\(report)")
        let listing = try hubListing(hub)
        #expect(try listing[replicaID(of: laptop)] == ownManifest(of: laptop))
        #expect(try listing[replicaID(of: phone)] == ownManifest(of: phone))
        let newcomer = try TestStore()
        _ = try newcomer.store.sync(with: hub)
        #expect(try newcomer.store.contents(of: "laptop.md") == .text("laptop again\n"))
        #expect(try newcomer.store.contents(of: "phone.md") == .text("phone\n"))
        try expectHubFsckClean(hub)
    }

    /// Six replicas sync with one hub at the same moment, each with a change: every push whose index moved under it
    /// receives again and pushes again, and the index ends listing all six, each with its newest manifest.
    @Test(arguments: HubAccess.allCases) func replicasSyncingAtOnceAllLandInTheIndex(_ access: HubAccess) throws {
        let hub = try makeHub(access)
        let replicas = try (0..<6).map { index in
            let replica = try TestStore()
            try replica.store.save(.text("\(index)\n"), to: DocumentKey("r/\(index).md"), device: "device\(index)")
            return replica
        }
        try concurrentlyPerform(replicas.count, workers: replicas.count) { index in
            _ = try replicas[index].store.sync(with: hub)
        }
        #expect(try hubListing(hub) == Dictionary(uniqueKeysWithValues: try replicas.map { (try replicaID(of: $0), try ownManifest(of: $0)) }))
        let newcomer = try TestStore()
        #expect(try newcomer.store.sync(with: hub).received.count == 6)
        for index in 0..<6 { #expect(try newcomer.store.contents(of: DocumentKey("r/\(index).md")) == .text("\(index)\n")) }
        try expectHubFsckClean(hub)
    }

    /// Once the index since its last snapshot lists as many manifests as that snapshot did, a push writes a new snapshot
    /// of every replica's newest manifest: the chain starts again, and a replica that read it last before the snapshot,
    /// and a newcomer, still get everything.
    @Test(arguments: HubAccess.allCases) func theIndexStartsAgainFromASnapshotAndNothingIsLost(_ access: HubAccess) throws {
        let hub = try makeHub(access)
        let laptop = try TestStore(), phone = try TestStore()
        let writer = try DocumentStore.open(at: laptop.path, instrumentation: StoreInstrumentation(indexSnapshotFloor: 1))
        try phone.store.save(.text("phone\n"), to: "phone.md", device: "phone")
        _ = try phone.store.sync(with: hub)
        for round in 0..<12 {
            try writer.save(.text("round \(round)\n"), to: "laptop.md", device: "laptop")
            _ = try writer.sync(with: hub)
        }
        // 13 pushes: a snapshot of the phone's manifest, then the laptop's, every third a snapshot of both.
        let log = try git(
            "-C", hubPath(hub), "log", "--first-parent",
            "--format=%(trailers:key=Sequence,valueonly,separator=) %(trailers:key=Snapshot,valueonly,separator=)",
            HubIndex.reference
        ).output.split(separator: "\n")
        let sinceSnapshot = try #require(log.firstIndex { $0.hasSuffix(" yes") })
        #expect(log.prefix(sinceSnapshot + 1) == ["13 no", "12 yes"], "\(log)")
        #expect(try hubListing(hub) == [replicaID(of: laptop): ownManifest(of: laptop), replicaID(of: phone): ownManifest(of: phone)])
        #expect(try phone.store.sync(with: hub).received.map(\.key) == Array(repeating: "laptop.md", count: 12))
        #expect(try phone.store.contents(of: "laptop.md") == .text("round 11\n"))
        let newcomer = try TestStore()
        _ = try newcomer.store.sync(with: hub)
        #expect(try newcomer.store.contents(of: "phone.md") == .text("phone\n"))
        #expect(try newcomer.store.contents(of: "laptop.md") == .text("round 11\n"))
        try expectHubFsckClean(hub)
    }

    /// A hub from before the index keeps one ref per replica, which replicas of that time read alone: a replica syncing
    /// with it adds its own ref there, as they do, and reads theirs. Once the others are forgotten, its next push gives
    /// the hub an index in place of its own ref.
    @Test func aHubOfManifestRefsStaysOneUntilItHoldsOnlyThisReplicas() async throws {
        let url = try daemon.makeHub()
        let hub = hubPath(url)
        let old = try TestStore(), laptop = try TestStore()
        try old.store.save(.text("old\n"), to: "old.md", device: "old")
        _ = try await old.store.sync(with: url)
        // What a replica of that time left: its manifest under its own ref, and no index.
        let oldID = try replicaID(of: old), oldManifest = try #require(try hubListing(url)[oldID])
        #expect(try git("-C", hub, "update-ref", ReplicaManifest.reference(of: oldID), oldManifest).status == 0)
        #expect(try git("-C", hub, "update-ref", "-d", HubIndex.reference).status == 0)
        try laptop.store.save(.text("laptop\n"), to: "laptop.md", device: "laptop")
        #expect(try await laptop.store.sync(with: url).received.map(\.key) == ["old.md"])
        let laptopRef = ReplicaManifest.reference(of: try replicaID(of: laptop))
        #expect(try hubRefs(url).sorted() == [ReplicaManifest.reference(of: oldID), laptopRef].sorted())
        // What the old replica reads: the laptop's ref lists its version.
        let listed = try git("-C", hub, "log", "--format=%s", laptopRef).output
        #expect(listed.contains("Save laptop.md"), "\(listed)")
        try expectHubFsckClean(url)
        _ = try await laptop.store.forgetReplica(oldID, on: url)
        #expect(try hubRefs(url) == [laptopRef])
        try laptop.store.save(.text("laptop again\n"), to: "laptop.md", device: "laptop")
        _ = try await laptop.store.sync(with: url)
        #expect(try hubRefs(url) == [HubIndex.reference] && hubListing(url) == [replicaID(of: laptop): ownManifest(of: laptop)])
        let newcomer = try TestStore()
        #expect(Set(try await newcomer.store.sync(with: url).received.map(\.key)) == ["old.md", "laptop.md"])
        try expectHubFsckClean(url)
    }

    /// A retired replica forgotten on the hub: its ref goes, nothing it wrote is lost to a newcomer, and when it comes
    /// back it publishes again and loses nothing.
    @Test(arguments: HubAccess.allCases) func aRetiredReplicaIsForgottenAndNothingItWroteIsLost(_ access: HubAccess) async throws {
        let hub = try makeHub(access)
        let laptop = try TestStore(), phone = try TestStore(), tablet = try TestStore()
        try laptop.store.save(.text("laptop\n"), to: "laptop.md", device: "laptop")
        _ = try await laptop.store.sync(with: hub)
        try tablet.store.save(.text("tablet\n"), to: "tablet.md", device: "tablet")
        _ = try await tablet.store.sync(with: hub)
        _ = try await phone.store.sync(with: hub)
        let tabletID = try replicaID(of: tablet)
        // The laptop has not seen the tablet's version yet: forgetting syncs first, and its manifest then reaches it.
        _ = try await laptop.store.forgetReplica(tabletID, on: hub)
        #expect(try hubListing(hub)[tabletID] == nil)
        #expect(try laptop.store.replicas().map(\.id).contains(tabletID) == false)
        try expectHubFsckClean(hub)
        let newcomer = try TestStore()
        #expect(Set(try await newcomer.store.sync(with: hub).received.map(\.key)) == ["laptop.md", "tablet.md"])
        // Another store that still has a copy drops it when it forgets it too; the hub has nothing left to change.
        #expect(try phone.store.replicas().map(\.id).contains(tabletID))
        _ = try await phone.store.forgetReplica(tabletID, on: hub)
        #expect(try phone.store.replicas().map(\.id).contains(tabletID) == false)
        #expect(try phone.store.contents(of: "tablet.md") == .text("tablet\n"))
        // Its own replica is never forgotten.
        await #expect {
            try await phone.store.forgetReplica(try replicaID(of: phone), on: hub)
        } throws: { error in
            "\(error)".contains("is this store's own replica")
        }
        #expect(try hubListing(hub)[replicaID(of: phone)] != nil)
        // The tablet comes back: it publishes again, as a new replica would, and its new version reaches the others.
        try tablet.store.save(.text("tablet again\n"), to: "tablet.md", device: "tablet")
        _ = try await tablet.store.sync(with: hub)
        #expect(try hubListing(hub)[tabletID] != nil && hubRefs(hub) == [HubIndex.reference])
        _ = try await newcomer.store.sync(with: hub)
        #expect(try newcomer.store.contents(of: "tablet.md") == .text("tablet again\n"))
        try expectHubFsckClean(hub)
    }

    /// A replica whose manifest lists a version this store refused cannot be shown to lose nothing: it is not forgotten.
    @Test func aReplicaListingWhatNoOtherReachesIsNotForgotten() async throws {
        let hub = try daemon.makeHub()
        let hubDirectory = hubPath(hub)
        let laptop = try TestStore(), phone = try TestStore()
        try laptop.store.save(.text("good\n"), to: "good.md", device: "laptop")
        _ = try await laptop.store.sync(with: hub)
        _ = try await phone.store.sync(with: hub)
        let laptopID = try replicaID(of: laptop)
        let (next, _) = try listingAnUnparsableCommit(laptopID, in: hub)
        await #expect {
            try await phone.store.forgetReplica(try replicaID(of: laptop), on: hub)
        } throws: { error in
            "\(error)".contains("forgetting it would lose them")
        }
        #expect(try hubListing(hub)[laptopID] == next)
    }

    /// Lists in the index of the hub `url` a next manifest of `replica`, as Truce writes one, that also lists a commit
    /// libgit2 cannot parse (an author without an email); returns that manifest and that commit.
    private func listingAnUnparsableCommit(_ replica: String, in url: String) throws -> (next: String, unparsable: String) {
        let hubDirectory = hubPath(url)
        let manifest = try #require(try hubListing(url)[replica])
        let emptyTree = ObjectID.emptyTree.hex
        let unparsable = try git(
            ["-C", hubDirectory, "hash-object", "-t", "commit", "--literally", "-w", "--stdin"],
            input: .text("tree \(emptyTree)\nauthor no email 1796000000 +0000\ncommitter no email 1796000000 +0000\n\nSave x.md\n")
        ).output.trimmingCharacters(in: .whitespacesAndNewlines)
        let header = ReplicaManifest.Header(
            replica: replica, sequence: 1_000, journal: nil, isSnapshot: false, listedSinceSnapshot: 2, snapshotHeads: 1)
        let next = try git(
            [
                "-c", "user.name=truce", "-c", "user.email=manifest@truce", "-C", hubDirectory, "commit-tree", emptyTree, "-p", manifest, "-p",
                unparsable,
            ],
            input: .text(ReplicaManifest.message(header))
        ).output.trimmingCharacters(in: .whitespacesAndNewlines)
        try appendToIndex(listing: next, in: url)
        return (next, unparsable)
    }

    /// Moves the index of the hub `url` to a new entry, as Truce writes one, that lists `manifest`.
    private func appendToIndex(listing manifest: String, in url: String) throws {
        let hubDirectory = hubPath(url)
        let tip = try hubReference(HubIndex.reference, in: url)
        let fields = try git("-C", hubDirectory, "log", "-1", "--format=%(trailers:key=Replica,valueonly)%n%(trailers:key=Sequence,valueonly)", tip)
            .output.split(separator: "\n").map(String.init)
        let header = ReplicaManifest.Header(
            replica: fields[0], sequence: Int(fields[1])! + 1, journal: nil, isSnapshot: false, listedSinceSnapshot: 1, snapshotHeads: 1)
        let entry = try git(
            [
                "-c", "user.name=truce", "-c", "user.email=manifest@truce", "-C", hubDirectory, "commit-tree", ObjectID.emptyTree.hex, "-p", tip,
                "-p", manifest,
            ],
            input: .text(ReplicaManifest.message(header, title: HubIndex.title))
        ).output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try git("-C", hubDirectory, "update-ref", HubIndex.reference, entry, tip).status == 0)
    }

    /// The manifest `store` last published.
    private func ownManifest(of store: TestStore) throws -> String {
        try store.git("rev-parse", ReplicaManifest.reference(of: replicaID(of: store))).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func replicaID(of store: TestStore) throws -> String {
        try store.git("config", "truce.replica").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func versionsTravelOnThroughAReplicaThatSyncsWithTwoHubs() throws {
        let first = try daemon.makeHub("first.git"), second = try daemon.makeHub("second.git")
        let laptop = try TestStore(), tablet = try TestStore(), phone = try TestStore()
        try laptop.store.save(.text("from the laptop\n"), to: "a.md", device: "laptop")
        _ = try laptop.store.sync(with: first)
        _ = try tablet.store.sync(with: first)
        _ = try tablet.store.sync(with: second)
        #expect(try phone.store.sync(with: second).received.map(\.key) == ["a.md"])
        try phone.store.save(.text("from the phone\n"), to: "b.md", device: "phone")
        _ = try phone.store.sync(with: second)
        _ = try tablet.store.sync(with: second)
        _ = try tablet.store.sync(with: first)
        #expect(try laptop.store.sync(with: first).received.map(\.key) == ["b.md"])
        #expect(try laptop.store.contents(of: "b.md") == .text("from the phone\n"))
    }

    @Test func aReplicaOfflineWhileOthersSnapshotCatchesUpAndLosesNothing() throws {
        let hub = try daemon.makeHub()
        let laptop = try TestStore(), phone = try TestStore(), away = try TestStore()
        try away.store.save(.text("written before leaving\n"), to: "away.md", device: "away")
        _ = try away.store.sync(with: hub)
        // Enough rounds that the laptop's chain passes its snapshot threshold and starts again from a snapshot.
        for round in 0..<7 {
            _ = try laptop.store.saveBatch(
                (0..<150).map {
                    BatchSave(key: try DocumentKey("bulk/\($0).md"), content: Data("round \(round) \($0)\n".utf8), device: "laptop")
                })
            _ = try laptop.store.sync(with: hub)
            _ = try phone.store.sync(with: hub)
        }
        // Every manifest the ref pointed at, from its reflog: a snapshot starts the chain again, so the chain alone shows the last.
        let snapshots =
            try laptop.git("log", "-g", "--format=%B", ReplicaManifest.reference(of: replicaID(of: laptop)))
            .components(separatedBy: "Snapshot: yes").count - 1
        #expect(snapshots >= 2, "the laptop's chain never restarted from a snapshot")
        try away.store.save(.text("written while away\n"), to: "away.md", device: "away")
        let report = try away.store.sync(with: hub)
        #expect(Set(report.received.map(\.key)).count == 150)
        _ = try laptop.store.sync(with: hub)
        for store in [laptop, phone, away] {
            #expect(try store.store.contents(of: "bulk/7.md") == .text("round 6 7\n"))
        }
        #expect(try laptop.store.contents(of: "away.md") == .text("written while away\n"))
        try expectHubFsckClean(hub)
    }

    /// A first push into a hub on a local path reads what it sends, and the heads its manifest's parts are dated by,
    /// from the store's packs, not through libgit2 (the parts' dates were once read through the scratch repository the
    /// manifest is written in, whose own packs are none, and so each through libgit2).
    @Test func aFirstPushReadsTheStoresPackedVersionsInPlace() async throws {
        let writer = try TestStore()
        let documents = ReplicaManifest.fanOut * 3
        _ = try await writer.store.saveBatch(
            (0..<documents).map { BatchSave(key: DocumentKey(stringLiteral: "d/\($0).txt"), content: .text("\($0)\n")) })
        let hub = hubPath(try makeHub(.localPath))
        let before = writer.store.instrumentation.readsThroughLibgit2
        #expect(try await writer.store.sync(with: hub).sent == documents)
        // The manifest and its parts, written in memory to be pushed, are read through libgit2: a few, not one per head.
        let throughLibgit2 = writer.store.instrumentation.readsThroughLibgit2 - before
        #expect(throughLibgit2 <= documents / ReplicaManifest.fanOut + 2, "\(throughLibgit2) objects read through libgit2")
        #expect(try git("-C", hub, "fsck", "--strict").status == 0)
    }

    /// A first sync from a hub on a local path reads the hub's packs in place, the blobs' headers too: through libgit2,
    /// the check that each version's file is a blob mapped every pack of the hub a second time.
    @Test func aFirstSyncReadsTheHubsPacksInPlace() async throws {
        let writer = try TestStore(), reader = try TestStore()
        let documents = ReplicaManifest.fanOut * 3
        _ = try await writer.store.saveBatch(
            (0..<documents).map { BatchSave(key: DocumentKey(stringLiteral: "d/\($0).txt"), content: .text("\($0)\n")) })
        let hub = hubPath(try makeHub(.localPath))
        _ = try await writer.store.sync(with: hub)
        let before = reader.store.instrumentation.readsThroughLibgit2
        #expect(try await reader.store.sync(with: hub).received.count == documents)
        // The hub's index and the reader's own first manifest, which it pushes: a few, not one per head.
        let throughLibgit2 = reader.store.instrumentation.readsThroughLibgit2 - before
        #expect(throughLibgit2 <= documents / ReplicaManifest.fanOut + 2, "\(throughLibgit2) objects read through libgit2")
        #expect(try reader.store.contents(of: "d/7.txt") == .text("7\n"))
    }

    /// How a test reaches its hub: through the git daemon (libgit2's push), or by its path (Truce writes the pack there).
    enum HubAccess: String, CaseIterable {
        case gitDaemon, localPath
    }

    /// A new empty hub, as `access` reaches it.
    private func makeHub(_ access: HubAccess) throws -> String {
        let url = try daemon.makeHub()
        return access == .gitDaemon ? url : hubPath(url)
    }

    @Test(arguments: HubAccess.allCases) func aHubWithOneRefPerVersionIsAdoptedAndCleared(_ access: HubAccess) throws {
        let hub = try makeHub(access)
        let hubDirectory = hubPath(hub)
        let old = try TestStore(), laptop = try TestStore()
        try old.store.save(.text("from before manifests\n"), to: "old.md", device: "old")
        try old.store.save(.text("also\n"), to: "notes/also.md", device: "old")
        // What a Truce from before manifests left on its hub: every head ref pushed as it is, one packed and one loose.
        #expect(try git("-C", old.path, "push", "-q", hubDirectory, "refs/truce/heads/*:refs/truce/heads/*").status == 0)
        #expect(try git("-C", hubDirectory, "pack-refs", "--all").status == 0)
        try old.store.save(.text("also, later\n"), to: "notes/also.md", device: "old")
        #expect(try git("-C", old.path, "push", "-q", "--force", hubDirectory, "refs/truce/heads/*:refs/truce/heads/*").status == 0)
        let report = try laptop.store.sync(with: hub)
        #expect(Set(report.received.map(\.key)) == ["old.md", "notes/also.md"])
        #expect(try hubRefs(hub) == [HubIndex.reference])
        let phone = try TestStore()
        #expect(Set(try phone.store.sync(with: hub).received.map(\.key)) == ["old.md", "notes/also.md"])
        try expectHubFsckClean(hub)
    }

    /// A sync's new manifest, parts and all, enters the store as one pack once the hub has it, never as loose objects
    /// fsynced one by one.
    @Test(arguments: HubAccess.allCases) func aSyncLeavesNoLooseObjectInTheStore(_ access: HubAccess) throws {
        let hub = try makeHub(access)
        let laptop = try TestStore()
        // 65 parts of 64 heads: a manifest whose parts are listed by parts.
        try saveInOneSecond(65 * ReplicaManifest.fanOut, into: laptop)
        _ = try laptop.store.sync(with: hub)
        try laptop.store.save(.text("changed\n"), to: "d/0.md", device: "laptop")
        _ = try laptop.store.sync(with: hub)
        let objects = laptop.path + "/objects/"
        let loose = try FileManager.default.contentsOfDirectory(atPath: objects).filter { $0.count == 2 }.flatMap {
            try FileManager.default.contentsOfDirectory(atPath: objects + $0)
        }
        #expect(loose.isEmpty, "\(loose.count) loose objects")
        #expect(try laptop.git("fsck", "--strict", "--no-dangling").isEmpty)
        let phone = try TestStore()
        #expect(Set(try phone.store.sync(with: hub).received.map(\.key)).count == 65 * ReplicaManifest.fanOut)
    }

    /// The packs in a store's object directory.
    private func packCount(_ store: TestStore) throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: store.path + "/objects/pack").filter { $0.hasSuffix(".pack") }.count
    }

    /// The copies `store` holds of other replicas' manifests, by ref name: every manifest ref but its own.
    private func manifestCopies(in store: TestStore) throws -> [String: String] {
        let own = try store.git("config", StoreEngine.replicaConfigName).trimmingCharacters(in: .whitespacesAndNewlines)
        var copies: [String: String] = [:]
        for line in try store.git("for-each-ref", "--format=%(refname) %(objectname)", ReplicaManifest.root).split(separator: "\n") {
            let fields = line.split(separator: " ").map(String.init)
            if fields[0] != ReplicaManifest.reference(of: own) { copies[fields[0]] = fields[1] }
        }
        return copies
    }

    /// The hub of `laptop` and `tablet`: 10 documents and a history of 3 from the laptop, a conflict between the two.
    private func hubOfTwoReplicas(_ access: HubAccess) throws -> (hub: String, keys: [DocumentKey]) {
        let hub = try makeHub(access)
        let laptop = try TestStore(), tablet = try TestStore()
        var keys = try (0..<10).map { try DocumentKey("d/\($0).md") }
        for key in keys { try laptop.store.save(.text("\(key.rawValue)\n"), to: key, device: "laptop") }
        for round in 0..<3 { try laptop.store.save(.text("long \(round)\n"), to: "long.md", device: "laptop") }
        try laptop.store.save(.text("laptop\n"), to: "shared.md", device: "laptop")
        try tablet.store.save(.text("tablet\n"), to: "shared.md", device: "tablet")
        _ = try laptop.store.sync(with: hub)
        _ = try tablet.store.sync(with: hub)
        keys += ["long.md", "shared.md"]
        return (hub, keys)
    }

    /// A sync that brings more heads than one batch takes checks, admits and adopts them batch by batch, a pack and a
    /// transaction each, and leaves the store as one batch would: the same heads, the same manifest copies.
    @Test(arguments: HubAccess.allCases) func aSyncInBatchesEndsAsASyncInOneBatch(_ access: HubAccess) throws {
        let (hub, keys) = try hubOfTwoReplicas(access)
        let whole = try TestStore(), batched = try TestStore()
        let inBatches = try DocumentStore.open(at: batched.path, instrumentation: StoreInstrumentation(receiveBatchSize: 3))
        let wholeReport = try whole.store.sync(with: hub)
        let batchedReport = try inBatches.sync(with: hub)
        #expect(batchedReport.refused.isEmpty && wholeReport.refused.isEmpty)
        #expect(batchedReport.received.count == 15)
        #expect(Set(batchedReport.received.map(\.version)) == Set(wholeReport.received.map(\.version)))
        for key in keys {
            let one = try whole.store.versions(of: key), many = try inBatches.versions(of: key)
            #expect(many.current?.id == one.current?.id && Set(many.conflicts.map(\.id)) == Set(one.conflicts.map(\.id)), "\(key)")
        }
        #expect(try inBatches.versions(of: "shared.md").conflicts.count == 1)
        let copies = (batched: try manifestCopies(in: batched), whole: try manifestCopies(in: whole))
        // The laptop's and the tablet's manifests (the batched store also copies the one `whole` pushed first).
        #expect(copies.whole.count == 2 && copies.whole.allSatisfy { copies.batched[$0.key] == $0.value }, "\(copies)")
        // 13 heads listed by the laptop's manifest and 1 by the tablet's, in batches of 3: five packs, where one batch
        // writes one.
        let packs = (batched: try packCount(batched), whole: try packCount(whole))
        #expect(packs.batched >= packs.whole + 4, "\(packs.batched) packs against \(packs.whole)")
        #expect(try batched.git("fsck", "--strict", "--no-dangling").isEmpty)
        #expect(try inBatches.sync(with: hub).received.isEmpty)
    }

    /// A first sync whose checks divide between two threads adopts and refuses what one thread's checks do: the same
    /// versions (documents with a history among them), with `refusing` the same head refused by name and nothing of it
    /// in the store; without, every object the second thread checked copied into the store.
    @Test(arguments: HubAccess.allCases, [false, true])
    func aFirstSyncCheckedOnTwoThreadsEndsAsOneCheckedOnOne(_ access: HubAccess, refusing: Bool) throws {
        let hub = try makeHub(access)
        let laptop = try TestStore()
        for index in 0..<40 { try laptop.store.save(.text("\(index)\n"), to: DocumentKey("d/\(index).md"), device: "laptop") }
        for round in 0..<3 { try laptop.store.save(.text("long \(round)\n"), to: "long.md", device: "laptop") }
        _ = try laptop.store.sync(with: hub)
        let unparsable = refusing ? try listingAnUnparsableCommit(try replicaID(of: laptop), in: hub).unparsable : nil
        let one = try TestStore(), two = try TestStore()
        let instrumentation = StoreInstrumentation(fewestDividedOnTwoThreads: 2)
        let onTwoThreads = try DocumentStore.open(at: two.path, instrumentation: instrumentation)
        let onOne = try one.store.sync(with: hub), divided = try onTwoThreads.sync(with: hub)
        #expect(instrumentation.headsCheckedOnASecondThread >= 20, "\(instrumentation.headsCheckedOnASecondThread) on a second thread")
        #expect(divided.refused.map(\.hex) == onOne.refused.map(\.hex) && divided.refused.map(\.hex) == unparsable.map { [$0] } ?? [])
        #expect(divided.received.count == 43 && Set(divided.received.map(\.version)) == Set(onOne.received.map(\.version)))
        #expect(divided.traffic.headsChecked == divided.traffic.headsToCheck)
        #expect(try onTwoThreads.contents(of: "long.md") == .text("long 2\n"))
        if let unparsable { #expect(try git("-C", two.path, "cat-file", "-e", unparsable).status != 0, "the refused head is in the store") }
        #expect(try two.git("fsck", "--strict", "--no-dangling").isEmpty)
    }

    /// A manifest of more heads than two levels of parts hold, one of whose parts of parts the hub holds only loose:
    /// the listing reads ahead what the packs give, level by level, reads that part as its walk would, and lists
    /// every head through it; the new replica receives every document and refuses none.
    @Test func aListingReadAheadFindsEveryHeadThroughAPartThePacksDoNotHold() async throws {
        let hub = try makeHub(.localPath)
        let laptop = try TestStore()
        let count = ReplicaManifest.fanOut * ReplicaManifest.fanOut + 100
        var stream = Data()
        for index in 0..<count {
            let body = Data("document \(index)\n".utf8)
            stream += Data("M 100644 inline d\(index % 50)/doc\(index).txt\ndata \(body.count)\n".utf8) + body + Data("\n".utf8)
        }
        _ = try await laptop.store.importDocuments(.stream(stream), device: "laptop")
        _ = try await laptop.store.sync(with: hub)

        // A part whose parents are parts, taken out of the hub's pack and written loose.
        let lines = try git("-C", hub, "log", "--all", "--format=%H %P%x09%s").output.split(separator: "\n")
        let parts = Set(lines.filter { $0.hasSuffix("\tManifest part") }.map { String($0.prefix(40)) })
        let partOfParts = try #require(
            lines.first { line in
                line.hasSuffix("\tManifest part")
                    && line.split(separator: "\t")[0].split(separator: " ").dropFirst().allSatisfy { parts.contains(String($0)) }
            }.map { String($0.prefix(40)) })
        let raw = try git("-C", hub, "cat-file", "commit", partOfParts).stdout
        let objects = try git("-C", hub, "rev-list", "--objects", "--all").output.split(separator: "\n").map { String($0.prefix(40)) }
        let oldPacks = try FileManager.default.contentsOfDirectory(atPath: hub + "/objects/pack")
        let kept = objects.filter { $0 != partOfParts }.joined(separator: "\n") + "\n"
        #expect(try git(["-C", hub, "pack-objects", "-q", "objects/pack/pack"], input: Data(kept.utf8)).status == 0)
        for name in oldPacks { try FileManager.default.removeItem(atPath: hub + "/objects/pack/" + name) }
        // Written loose once no pack holds it (git writes no loose copy of an object a pack has).
        #expect(try git(["-C", hub, "hash-object", "-t", "commit", "-w", "--stdin"], input: raw).output.hasPrefix(partOfParts))
        #expect(FileManager.default.fileExists(atPath: hub + "/objects/" + partOfParts.prefix(2) + "/" + partOfParts.dropFirst(2)))
        #expect(try git("-C", hub, "fsck", "--no-dangling").status == 0)

        let phone = try TestStore()
        let instrumentation = StoreInstrumentation(fewestDividedOnTwoThreads: 2)
        let store = try DocumentStore.open(at: phone.path, instrumentation: instrumentation)
        let report = try await store.sync(with: hub)
        #expect(report.refused.count == 0, "refused: \(report.refused.prefix(3))")
        #expect(report.received.count == count)
        #expect(try store.contents(of: "d7/doc4007.txt") == .text("document 4007\n"))
        #expect(try phone.git("fsck", "--strict", "--no-dangling").isEmpty)
    }

    /// A head refused in the last batch leaves the batches before it adopted, whole, and no manifest copy moved: the
    /// next sync reads the manifests again, adopts nothing twice and refuses the same head.
    @Test(arguments: HubAccess.allCases) func aHeadRefusedInALaterBatchKeepsTheEarlierBatchesAndMovesNoCopy(_ access: HubAccess) throws {
        let (hub, keys) = try hubOfTwoReplicas(access)
        // A head ref that is no Truce version: head refs are listed after every manifest's heads, so in the last batch.
        let hubDirectory = hubPath(hub)
        let tree = try git("-C", hubDirectory, "mktree").output.trimmingCharacters(in: .whitespacesAndNewlines)
        let forged = try git(["-C", hubDirectory, "commit-tree", tree], input: .text("not a version\n")).output
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try git("-C", hubDirectory, "update-ref", "refs/truce/heads/aa/\(String(repeating: "b", count: 38))/\(forged)", forged).status == 0)
        let batched = try TestStore()
        let inBatches = try DocumentStore.open(at: batched.path, instrumentation: StoreInstrumentation(receiveBatchSize: 3))
        let report = try inBatches.sync(with: hub)
        #expect(report.refused.map(\.hex) == [forged], "\(report.refused)")
        #expect(report.received.count == 15)
        for key in keys { #expect(try inBatches.versions(of: key).current != nil, "\(key)") }
        #expect(try manifestCopies(in: batched).isEmpty, "a manifest copy moved")
        #expect(try git("-C", batched.path, "cat-file", "-e", forged).status != 0, "the refused head is in the store")
        #expect(try batched.git("fsck", "--strict", "--no-dangling").isEmpty)
        let again = try inBatches.sync(with: hub)
        #expect(again.received.isEmpty && again.refused.count == 1, "\(again.received) \(again.refused)")
    }

    /// A manifest that lists a commit libgit2 cannot parse (an author line without an email) gets that head refused
    /// by name, as any bad head is: the listing only looks for the line that tells a version from a manifest, and
    /// the checks say what is wrong. The rest of what the hub holds is adopted.
    @Test(arguments: HubAccess.allCases) func aListedCommitLibgit2CannotParseIsRefusedByNameAndTheRestAdopted(_ access: HubAccess) throws {
        let hub = try makeHub(access)
        let hubDirectory = hubPath(hub)
        let laptop = try TestStore(), phone = try TestStore()
        try laptop.store.save(.text("good\n"), to: "good.md", device: "laptop")
        _ = try laptop.store.sync(with: hub)
        let (_, unparsable) = try listingAnUnparsableCommit(try replicaID(of: laptop), in: hub)
        let report = try phone.store.sync(with: hub)
        #expect(report.received.map(\.key) == ["good.md"])
        #expect(report.refused.map(\.hex) == [unparsable], "\(report.refused)")
        #expect(report.refused.first?.version?.hex == unparsable)
        #expect(try git("-C", phone.path, "cat-file", "-e", unparsable).status != 0, "the refused head is in the store")
        #expect(try phone.git("fsck", "--strict", "--no-dangling").isEmpty)
    }

    @Test func aManifestChainHoldingANonManifestIsRefusedByNameAndTheRestAdopted() throws {
        let hub = try daemon.makeHub()
        let hubDirectory = hubPath(hub)
        let laptop = try TestStore(), phone = try TestStore()
        try laptop.store.save(.text("good\n"), to: "good.md", device: "laptop")
        _ = try laptop.store.sync(with: hub)
        // A "manifest" for another replica that is an ordinary commit.
        let tree = try git("-C", hubDirectory, "mktree").output.trimmingCharacters(in: .whitespacesAndNewlines)
        let forged = try git(["-C", hubDirectory, "commit-tree", tree], input: .text("not a manifest\n")).output
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let forgedRef = ReplicaManifest.root + String(repeating: "ab", count: 16)
        #expect(try git("-C", hubDirectory, "update-ref", forgedRef, forged).status == 0)
        let report = try phone.store.sync(with: hub)
        #expect(report.received.map(\.key) == ["good.md"])
        #expect(report.refused.map(\.reference) == [forgedRef], "\(report.refused)")
        #expect(report.refused.first?.reason.contains("not a manifest") == true, "\(report.refused)")
        // What was refused is a manifest, and said to be one: its id is never given as a version's.
        let refusal = try #require(report.refused.first)
        #expect(refusal.manifest?.hex == forged)
        #expect(refusal.version == nil)
        #expect(refusal.hex == forged)
        let json = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(refusal)) as? [String: String])
        #expect(json == ["manifest": forged, "reference": forgedRef, "reason": refusal.reason])
        #expect(try phone.git("fsck", "--strict", "--no-dangling").isEmpty)
    }

    /// Every commit `tip` reaches in the hub `url`: its parents and committer time, as git reads them.
    private func hubCommits(from tip: String, in url: String) throws -> [String: (parents: [String], time: Int)] {
        let log = try git("-C", hubPath(url), "log", "--format=%H %ct %P", tip)
        #expect(log.status == 0, "\(log.errorOutput)")
        var commits: [String: (parents: [String], time: Int)] = [:]
        for line in log.output.split(separator: "\n") {
            let fields = line.split(separator: " ").map(String.init)
            commits[fields[0]] = (Array(fields.dropFirst(2)), Int(fields[1]) ?? -1)
        }
        return commits
    }

    private func hubReference(_ name: String, in url: String) throws -> String {
        try git("-C", hubPath(url), "rev-parse", name).output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `count` documents saved in one batch whose versions all share one committer second, as an import's nearly do,
    /// and `history` more versions of `d/0.md`.
    private func saveInOneSecond(_ count: Int, history: Int = 0, into store: TestStore) throws {
        let second = Date(timeIntervalSince1970: 1_796_000_000)
        let keys = try (0..<count).map { try DocumentKey("d/\($0).md") } + Array(repeating: DocumentKey("d/0.md"), count: history)
        _ = try store.store.saveBatch(
            keys.enumerated().map { index, key in
                BatchSave(key: key, content: Data("\(index)\n".utf8), device: "laptop", date: second, committerDate: second)
            })
    }

    /// The quick look that lets the listing skip a version's trailers says yes to every manifest and part message
    /// Truce writes, and to any message with a `Replica: ` line, the line both readings need.
    @Test func everyManifestAndPartMessageHasTheLineTheListingLooksFor() {
        let replica = String(repeating: "ab", count: 16)
        let header = ReplicaManifest.Header(
            replica: replica, sequence: 3, journal: nil, isSnapshot: true, listedSinceSnapshot: 0, snapshotHeads: 7)
        for message in [ReplicaManifest.message(header), ReplicaManifest.partMessage(of: replica), "Replica: \(replica)"] {
            #expect(ReplicaManifest.hasReplicaLine(message), "\(message)")
        }
        #expect(ReplicaManifest.header(parsing: ReplicaManifest.message(header)) == header)
        for message in ["", "Save notes/a.md\n\nDevice: laptop\n", "Save Replica: x\n", "Replica:x\n", "Save\n Replica: \(replica)\n", "Replica"] {
            #expect(!ReplicaManifest.hasReplicaLine(message), "\(message)")
            #expect(ReplicaManifest.header(parsing: message) == nil && !ReplicaManifest.isPart(message, of: replica))
        }
    }

    /// The listing looks for that line in a commit as stored, before libgit2 parses it: in the message only, which
    /// starts after the header's first empty line, as libgit2 reads it (a header line never counts).
    @Test func theLineIsLookedForInTheMessageOfACommitAsStored() throws {
        let test = try TestStore()
        let replica = String(repeating: "ab", count: 16)
        let header = ReplicaManifest.Header(
            replica: replica, sequence: 3, journal: nil, isSnapshot: true, listedSinceSnapshot: 0, snapshotHeads: 7)
        let messages = [
            ReplicaManifest.message(header), ReplicaManifest.partMessage(of: replica), "Replica: \(replica)", "", "Save a.md\n\nDevice: x\n",
            "Save\n Replica: \(replica)\n", "Save\n\nReplica: x\n", "Replica",
        ]
        // Written by git itself, read back raw through libgit2: the header git writes, then the message.
        for message in messages {
            let hex = try git("-c", "user.name=a", "-c", "user.email=a@a", "-C", test.path, "commit-tree", ObjectID.emptyTree.hex, "-m", message)
                .output.trimmingCharacters(in: .newlines)
            let id = try #require(ObjectID(hex: hex))
            try test.store.withEngine { engine in
                let raw = try #require(try engine.repository.rawCommit(id))
                let parsed = try engine.repository.readCommit(id).message
                #expect(ReplicaManifest.messageHasReplicaLine(rawCommit: raw) == ReplicaManifest.hasReplicaLine(parsed), "\(message)")
            }
        }
        // A header line is not the message, and a commit with no empty line has none.
        let tree = "tree \(ObjectID.emptyTree.hex)\nauthor a <a> 0 +0000\ncommitter a <a> 0 +0000\n"
        #expect(!ReplicaManifest.messageHasReplicaLine(rawCommit: Array((tree + "Replica: \(replica)\n\nSave\n").utf8)))
        #expect(!ReplicaManifest.messageHasReplicaLine(rawCommit: Array((tree + "Replica: \(replica)\n").utf8)))
        #expect(ReplicaManifest.messageHasReplicaLine(rawCommit: Array((tree + "\nReplica: \(replica)").utf8)))
    }

    /// libgit2's walks keep one list sorted by committer time and insert behind every commit as new or newer. Were
    /// parts as new as their manifest, a walk would insert every head of one second before taking one out: minutes
    /// at 100,000 heads in every push. A part older than what it lists gets its heads taken out as they come in.
    @Test func aManifestPartIsASecondOlderThanTheOldestCommitItLists() throws {
        let hub = try daemon.makeHub()
        let laptop = try TestStore()
        try saveInOneSecond(200, into: laptop)
        _ = try laptop.store.sync(with: hub)
        let manifest = try #require(try hubListing(hub)[replicaID(of: laptop)])
        let commits = try hubCommits(from: manifest, in: hub)
        let parts = try #require(commits[manifest]).parents
        #expect(parts.count == 4, "200 heads, at most 64 a part: \(parts)")
        #expect(Set(parts.flatMap { commits[$0]?.parents ?? [] }).count == 200)
        for part in parts {
            let listedTimes = (commits[part]?.parents ?? []).compactMap { commits[$0]?.time }
            #expect(listedTimes.count == 64 || part == parts.last)
            #expect(commits[part]?.time == (listedTimes.min() ?? 0) - 1, "part \(part)")
        }
        // The manifest itself stays at the time it was written: newer than every part and head.
        #expect(try #require(commits[manifest]).time > 1_796_000_000)
    }

    /// With git as the oracle: one new version in a store whose heads share one committer second, listed by two
    /// levels of parts, sends that version and nothing the hub has, and the other replica receives just it.
    @Test(arguments: HubAccess.allCases) func oneChangeAmongHeadsOfOneSecondSendsWhatGitSaysTheHubLacks(_ access: HubAccess) throws {
        let hub = try makeHub(access)
        let laptop = try TestStore(), phone = try TestStore()
        // 65 parts of 64 heads, grouped in turn into two parts: the manifest's parts list parts.
        let documents = 65 * ReplicaManifest.fanOut
        try saveInOneSecond(documents, history: 4, into: laptop)
        let laptopID = try replicaID(of: laptop)
        let initial = try laptop.store.sync(with: hub)
        let versionsOnHub = try git("-C", hubPath(hub), "rev-list", "--count", "--grep=^Document: ", "--all").output
        #expect(initial.sent == documents + 4 && versionsOnHub == "\(documents + 4)\n", "\(initial.sent) \(versionsOnHub)")
        let first = try #require(try hubListing(hub)[laptopID])
        #expect(try hubCommits(from: first, in: hub)[first]?.parents.count == 2)
        #expect(try phone.store.sync(with: hub).received.count == documents + 4)

        let hubHad = try git("-C", hubPath(hub), "for-each-ref", "--format=%(objectname)").output.split(separator: "\n").map(String.init)
        #expect(hubHad.count == 1, "the hub's index, listing the laptop's manifest and the phone's: \(hubHad)")
        let version = try laptop.store.save(.text("changed\n"), to: "d/0.md", device: "laptop")
        let sent = try laptop.store.sync(with: hub)
        let pushed = try #require(try hubListing(hub)[laptopID])
        let lacked = try git(["-C", hubPath(hub), "rev-list", "--grep=^Document: ", pushed, "--not"] + hubHad).output
        #expect(lacked == version.id.hex + "\n")
        #expect(sent.sent == 1)
        // What the pack held is what git counts the hub lacked: the index entry, the manifest, the version, its two trees
        // and blob.
        let objects = try git(["-C", hubPath(hub), "rev-list", "--objects", HubIndex.reference, "--not"] + hubHad).output.split(separator: "\n")
        #expect(sent.traffic.sentObjects == objects.count && objects.count == 6, "\(sent.traffic) \(objects)")
        #expect(try phone.store.sync(with: hub).received.map(\.version) == [version.id])
        try expectHubFsckClean(hub)
    }
}
