import Foundation
import TestSupport
import Testing

@testable import TruceCore

/// Stores that sync through an encrypted hub: the hub holds nothing readable, and the stores converge as through a
/// plain one.
@Suite(.timeLimit(.minutes(10))) struct EncryptedHubTests {
    static let secretKey = "private/diary-of-alice.md"
    static let secretContent = "the combination is 4-8-15-16-23-42\n"

    /// Every object of the bare repository at `hub`, inflated (as `git cat-file --batch` prints them).
    static func everyObject(in hub: String) throws -> Data {
        let ids = try git(["-C", hub, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)"]).stdout
        #expect(!ids.isEmpty)
        return try git(["-C", hub, "cat-file", "--batch"], input: ids).stdout
    }

    /// A new empty bare repository (`git init --bare`) on a local path, removed when the value is released.
    static func bareHub() throws -> BareRepository { try BareRepository("truce-encrypted-hub") }

    /// A new store that joined the encrypted hub at `hub` and was approved by `member`, with its device's fingerprint.
    static func joinedAndApproved(_ hub: String, by member: TestStore) async throws -> (store: TestStore, device: String) {
        let store = try TestStore()
        let device = try await store.store.joinEncryptedHub(hub).thisDevice
        try await member.store.approveDevice(device, on: hub)
        return (store, device)
    }

    /// A store that founded an encrypted hub, and one that joined it and was approved.
    static func foundedAndJoined(hub: String) async throws -> (founder: TestStore, joiner: TestStore, founding: EncryptedHubDevices) {
        let founder = try TestStore(), joiner = try TestStore()
        let founding = try await founder.store.encryptHub(hub)
        let asking = try await joiner.store.joinEncryptedHub(hub)
        #expect(asking.store == founding.store)
        let seen = try await founder.store.encryptedHubDevices(on: hub)
        #expect(seen.asking == [asking.thisDevice])
        try await founder.store.approveDevice(asking.thisDevice, on: hub)
        return (founder, joiner, founding)
    }

    @Test(arguments: [false, true])
    func storesConvergeThroughAHubThatHoldsOnlyCiphertext(throughDaemon: Bool) async throws {
        let daemon = throughDaemon ? try GitDaemon() : nil
        let bare = throughDaemon ? nil : try Self.bareHub()
        let hub = try daemon?.makeHub() ?? bare!.path
        let (founder, joiner, founding) = try await Self.foundedAndJoined(hub: hub)
        #expect(founding.recoveryCode != nil && founding.members.count == 2)
        try founder.store.save(.text(Self.secretContent), to: DocumentKey(stringLiteral: Self.secretKey), device: "alice-laptop")
        let sent = try await founder.store.sync(with: hub)
        let received = try await joiner.store.sync(with: hub)
        #expect(received.received.map(\.key.rawValue) == [Self.secretKey])
        // The traffic reported is the hub's: sealed bytes, each way.
        #expect(sent.traffic.sentBytes > 0 && received.traffic.receivedBytes > 0, "\(sent.traffic) \(received.traffic)")
        let nothing = try await joiner.store.sync(with: hub)
        #expect(nothing.traffic.sentBytes == 0 && nothing.traffic.receivedBytes == 0, "\(nothing.traffic)")
        #expect(try joiner.store.contents(of: DocumentKey(stringLiteral: Self.secretKey)) == .text(Self.secretContent))

        // Both edit; both sync twice; both see the same conflict.
        try founder.store.save(.text("edit one\n"), to: DocumentKey(stringLiteral: Self.secretKey), device: "alice-laptop")
        try joiner.store.save(.text("edit two\n"), to: DocumentKey(stringLiteral: Self.secretKey), device: "alice-phone")
        for store in [founder, joiner, founder] { _ = try await store.store.sync(with: hub) }
        let views = try [founder, joiner].map { try $0.store.versions(of: DocumentKey(stringLiteral: Self.secretKey)) }
        #expect(views.allSatisfy { $0.state == .inConflict && $0.heads.count == 2 })
        #expect(views[0].current?.id == views[1].current?.id)

        let path = daemon.map { $0.root + "/hub.git" } ?? hub
        let everything = try Self.everyObject(in: path)
        for secret in [Self.secretKey, "diary", "combination", "edit one", "alice-laptop", "alice-phone", "Replica:", "Truce-"] {
            #expect(everything.range(of: Data(secret.utf8)) == nil, "the hub shows \(secret)")
        }
        // A pack stored as a blob would hide its objects from the search above behind zlib: no blob is one.
        #expect(everything.range(of: Data("\nPACK\0\0\0\u{2}".utf8)) == nil, "the hub holds a pack in the clear")
        let references = try git(["-C", path, "for-each-ref", "--format=%(refname)"]).output.split(separator: "\n")
        #expect(references.count == 3 && references.allSatisfy { $0.hasPrefix("refs/truce/sealed/") }, "\(references)")
        #expect(
            try git(["-C", path, "log", "--all", "--format=%an %ae %at %cn %ce %ct"]).output.split(separator: "\n").allSatisfy {
                $0 == "truce sealed@truce 0 truce sealed@truce 0"
            })
        #expect(try git(["-C", path, "fsck", "--strict"]).status == 0)
        for store in [founder, joiner] { #expect(try store.git("fsck", "--strict", "--no-dangling").isEmpty) }

        // The hub's own maintenance keeps working, and syncs after it too.
        #expect(try git(["-C", path, "gc", "--quiet", "--aggressive", "--prune=now"]).status == 0)
        try joiner.store.save(.text("after gc\n"), to: "after.md", device: "alice-phone")
        for store in [joiner, founder] { _ = try await store.store.sync(with: hub) }
        #expect(try founder.store.contents(of: "after.md") == .text("after gc\n"))
        #expect(try git(["-C", path, "fsck", "--strict"]).status == 0)
    }
}

/// A sync whose push the hub refuses after the entry was sealed here: nothing is lost, and the next sync sends it.
@Suite(.timeLimit(.minutes(10))) struct RefusedSealedPushTests {
    @Test func anEntrySealedButRefusedIsSentByTheNextSyncAndLaterChangesFollowIt() async throws {
        let daemon = try GitDaemon()
        let hub = try daemon.makeHub()
        let (writer, reader, _) = try await EncryptedHubTests.foundedAndJoined(hub: hub)
        let marker = daemon.root + "/refuse", hook = daemon.root + "/hub.git/hooks/pre-receive"
        try "#!/bin/sh\n[ -e \"\(marker)\" ] && { echo refused >&2; exit 1; }\nexit 0\n".write(toFile: hook, atomically: true, encoding: .utf8)
        #expect(chmod(hook, 0o755) == 0)
        try writer.store.save(.text("first\n"), to: "a.md", device: "writer")
        FileManager.default.createFile(atPath: marker, contents: Data())
        await #expect(throws: TruceError.self) { _ = try await writer.store.sync(with: hub) }
        try FileManager.default.removeItem(atPath: marker)
        _ = try await writer.store.sync(with: hub)
        try writer.store.save(.text("second\n"), to: "b.md", device: "writer")
        try writer.store.save(.text("first, edited\n"), to: "a.md", device: "writer")
        _ = try await writer.store.sync(with: hub)
        _ = try await reader.store.sync(with: hub)
        #expect(try reader.store.contents(of: "a.md") == .text("first, edited\n"))
        #expect(try reader.store.contents(of: "b.md") == .text("second\n"))
        #expect(try reader.store.history(of: "a.md").count == 2 && reader.store.versions(of: "a.md").heads.count == 1)
        for store in [writer, reader] { #expect(try store.git("fsck", "--strict", "--no-dangling").isEmpty) }
    }
}

/// What works through a plain hub works through an encrypted one.
@Suite(.timeLimit(.minutes(10))) struct EncryptedHubParityTests {
    /// Both replicas resolve what they see after each sync and converge on one resolution commit; a recorded answer
    /// travels and is replayed as the same commit; prune on either side loses nothing the next sync needs.
    @Test func resolutionRecordedAnswersAndPruneWorkAsThroughAPlainHub() async throws {
        let bare = try EncryptedHubTests.bareHub(), hub = bare.path
        let (a, b, _) = try await EncryptedHubTests.foundedAndJoined(hub: hub)
        let heads: [(String, Data?)] = [("laptop", .text("one\nTWO\nthree\n")), ("phone", .text("one\n2\nthree\n"))]
        try a.makeConflict("x.md", base: .text("one\ntwo\nthree\n"), heads: heads)
        _ = try await a.store.resolve("x.md", answering: ["H1": .both], device: "person")
        try a.makeConflict("y.md", base: .text("one\ntwo\nthree\n"), heads: heads)
        _ = try await a.store.sync(with: hub)
        _ = try await b.store.sync(with: hub)
        let onA = try await a.store.resolve("y.md")
        let onB = try await b.store.resolve("y.md")
        #expect(onA.version != nil && onA.version?.id == onB.version?.id, "\(onA) \(onB)")

        // Concurrent edits, each side resolving after each sync with its resolvers: one head, everywhere.
        try a.store.save(.text("a\nb\nc\n"), to: "n.md", device: "a")
        for store in [a, b] { _ = try await store.store.sync(with: hub) }
        try a.store.save(.text("A\nb\nc\n"), to: "n.md", device: "a")
        try b.store.save(.text("a\nb\nC\n"), to: "n.md", device: "b")
        for store in [a, b, a, b] { _ = try await store.store.sync(with: hub, resolving: true, device: "resolver") }
        let views = try [a, b].map { try $0.store.versions(of: "n.md") }
        #expect(views.allSatisfy { $0.heads.count == 1 } && views[0].current?.id == views[1].current?.id, "\(views)")
        #expect(try a.store.contents(of: "n.md") == .text("A\nb\nC\n"))

        _ = try await a.store.prune(expire: 0)
        _ = try await b.store.prune(expire: 0)
        try b.store.save(.text("after prune\n"), to: "p.md", device: "b")
        for store in [b, a] { _ = try await store.store.sync(with: hub) }
        #expect(try a.store.contents(of: "p.md") == .text("after prune\n"))
        for store in [a, b] { #expect(try store.git("fsck", "--strict", "--no-dangling").isEmpty) }

        // Forgetting a replica is a plain hub's: refused here, nothing changed.
        let replica = try b.git("config", "truce.replica").trimmingCharacters(in: .whitespacesAndNewlines)
        await #expect(throws: TruceError.self) { _ = try await a.store.forgetReplica(replica, on: hub) }
    }
}

/// A store whose cache of an encrypted hub is lost joins it again and goes on: its own chain is taken back.
@Suite(.timeLimit(.minutes(10))) struct LostCacheTests {
    @Test func aStoreThatLostItsCacheJoinsAgainAndItsChainGoesOn() async throws {
        let bare = try EncryptedHubTests.bareHub(), hub = bare.path
        let (a, b, _) = try await EncryptedHubTests.foundedAndJoined(hub: hub)
        try b.store.save(.text("one\n"), to: "b.md", device: "b")
        _ = try await b.store.sync(with: hub)
        try FileManager.default.removeItem(atPath: b.path + "/truce-hubs")
        #expect(b.store.isEncryptedHub(hub) == false)
        // Without its cache it is a plain store to the hub, which refuses it; nothing in the clear reaches the hub.
        await #expect(throws: TruceError.self) { _ = try await b.store.sync(with: hub) }
        let again = try await b.store.joinEncryptedHub(hub)
        #expect(try await a.store.encryptedHubDevices(on: hub).asking.isEmpty, "a member asks for nothing")
        #expect(again.thisDevice == (try await b.store.encryptedHubDevices(on: hub).thisDevice))
        try b.store.save(.text("two\n"), to: "b.md", device: "b")
        _ = try await b.store.sync(with: hub)
        _ = try await a.store.sync(with: hub)
        #expect(try a.store.contents(of: "b.md") == .text("two\n"))
        for store in [a, b] { #expect(try store.git("fsck", "--strict", "--no-dangling").isEmpty) }
    }
}
