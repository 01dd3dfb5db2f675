import Foundation
import TestSupport
import Testing

@testable import TruceCore

/// Who reads an encrypted hub: joining, revoking, and the recovery code.
@Suite(.timeLimit(.minutes(10))) struct HubKeyRingTests {
    @Test func aDeviceNotYetApprovedReadsNothingAndIsToldHowToBeApproved() async throws {
        let bare = try EncryptedHubTests.bareHub(), hub = bare.path
        let founder = try TestStore(), newcomer = try TestStore()
        _ = try await founder.store.encryptHub(hub)
        try founder.store.save(.text("secret\n"), to: "a.md", device: "founder")
        _ = try await founder.store.sync(with: hub)
        let asking = try await newcomer.store.joinEncryptedHub(hub)
        await #expect {
            _ = try await newcomer.store.sync(with: hub)
        } throws: { error in
            guard case .invalidRemote(_, let reason) = error as? TruceError else { return false }
            return reason.contains("truce hub approve \(asking.thisDevice)")
        }
        #expect(try newcomer.store.documents().isEmpty)
        try await founder.store.approveDevice(asking.thisDevice, on: hub)
        #expect(try await founder.store.encryptedHubDevices(on: hub).asking.isEmpty)
        _ = try await newcomer.store.sync(with: hub)
        #expect(try newcomer.store.contents(of: "a.md") == .text("secret\n"))
    }

    @Test func aRevokedDeviceReadsNothingWrittenAfterAndTheOthersReadEverything() async throws {
        let bare = try EncryptedHubTests.bareHub(), hub = bare.path
        let (founder, kept, _) = try await EncryptedHubTests.foundedAndJoined(hub: hub)
        let (revoked, revokedDevice) = try await EncryptedHubTests.joinedAndApproved(hub, by: founder)
        try founder.store.save(.text("before\n"), to: "old.md", device: "founder")
        for store in [founder, kept, revoked] { _ = try await store.store.sync(with: hub) }
        #expect(try revoked.store.contents(of: "old.md") == .text("before\n"))
        try revoked.store.save(.text("from the revoked device, before\n"), to: "theirs.md", device: "revoked")
        _ = try await revoked.store.sync(with: hub)

        try await founder.store.revokeDevice(revokedDevice, on: hub)
        #expect(try await founder.store.encryptedHubDevices(on: hub).members.contains(revokedDevice) == false)
        try founder.store.save(.text("after\n"), to: "new.md", device: "founder")
        _ = try await founder.store.sync(with: hub)
        // What the revoked device writes now is not read by anyone.
        try revoked.store.save(.text("from the revoked device, after\n"), to: "late.md", device: "revoked")
        await #expect(throws: TruceError.self) { _ = try await revoked.store.sync(with: hub) }
        #expect(try revoked.store.documents().contains("new.md") == false)

        let (newcomer, _) = try await EncryptedHubTests.joinedAndApproved(hub, by: founder)
        for store in [kept, newcomer] {
            _ = try await store.store.sync(with: hub)
            #expect(try store.store.contents(of: "old.md") == .text("before\n"))
            #expect(try store.store.contents(of: "new.md") == .text("after\n"))
            #expect(try store.store.contents(of: "theirs.md") == .text("from the revoked device, before\n"))
            #expect(try store.store.documents().contains("late.md") == false)
        }
    }

    @Test func theRecoveryCodeRestoresTheStoreOnANewMachine() async throws {
        let bare = try EncryptedHubTests.bareHub(), hub = bare.path
        let founder = try TestStore()
        let founding = try await founder.store.encryptHub(hub)
        try founder.store.save(.text("kept safe\n"), to: "a.md", device: "founder")
        _ = try await founder.store.sync(with: hub)
        let code = try #require(founding.recoveryCode)

        let restored = try TestStore()
        await #expect(throws: TruceError.self) {
            _ = try await restored.store.recoverEncryptedHub(hub, recoveryCode: String(code.dropLast()) + (code.last == "0" ? "1" : "0"))
        }
        let devices = try await restored.store.recoverEncryptedHub(hub, recoveryCode: code.lowercased())
        #expect(devices.store == founding.store && devices.members.contains(devices.thisDevice))
        _ = try await restored.store.sync(with: hub)
        #expect(try restored.store.contents(of: "a.md") == .text("kept safe\n"))
    }

    @Test func aPlainSyncRefusesAnEncryptedHubAndAnEncryptedHubRefusesAPlainOne() async throws {
        let bare = try EncryptedHubTests.bareHub(), hub = bare.path
        let founder = try TestStore(), plain = try TestStore()
        _ = try await founder.store.encryptHub(hub)
        try plain.store.save(.text("plain\n"), to: "a.md", device: "plain")
        let before = try git(["-C", hub, "for-each-ref"]).output
        await #expect {
            _ = try await plain.store.sync(with: hub)
        } throws: { error in
            guard case .invalidRemote(_, let reason) = error as? TruceError else { return false }
            return reason.contains("encrypted hub")
        }
        #expect(try git(["-C", hub, "for-each-ref"]).output == before)

        let plainBare = try EncryptedHubTests.bareHub(), plainHub = plainBare.path
        _ = try await plain.store.sync(with: plainHub)
        await #expect(throws: TruceError.self) { _ = try await founder.store.encryptHub(plainHub) }
        let other = try TestStore()
        await #expect(throws: TruceError.self) { _ = try await other.store.joinEncryptedHub(plainHub) }
    }
}

/// A revoked device's replica ends where the revocation froze it.
@Suite(.timeLimit(.minutes(10))) struct FrozenReplicaTests {
    /// An entry the revoked device sealed before its revocation but got onto the hub only after it (its push was
    /// refused until then) is not read: the revoking device froze that replica at what it had read.
    @Test func anEntryARevokedDevicePushesAfterItsRevocationIsNotRead() async throws {
        let daemon = try GitDaemon()
        let hub = try daemon.makeHub()
        let (founder, kept, _) = try await EncryptedHubTests.foundedAndJoined(hub: hub)
        let (revoked, revokedDevice) = try await EncryptedHubTests.joinedAndApproved(hub, by: founder)
        try revoked.store.save(.text("before\n"), to: "theirs.md", device: "revoked")
        _ = try await revoked.store.sync(with: hub)

        // The hub takes no replica entries for a while: the revoked device's next entry stays on it, sealed.
        let marker = daemon.root + "/hold-replicas"
        let hook = daemon.root + "/hub.git/hooks/pre-receive"
        try """
        #!/bin/sh
        while read old new ref; do
            case "$ref" in refs/truce/sealed/replicas/*) [ -e "\(marker)" ] && { echo "held" >&2; exit 1; } ;; esac
        done
        exit 0
        """.write(toFile: hook, atomically: true, encoding: .utf8)
        #expect(chmod(hook, 0o755) == 0)
        FileManager.default.createFile(atPath: marker, contents: Data())
        try revoked.store.save(.text("written before the revocation, sent after\n"), to: "late.md", device: "revoked")
        await #expect(throws: TruceError.self) { _ = try await revoked.store.sync(with: hub) }

        try await founder.store.revokeDevice(revokedDevice, on: hub)
        try FileManager.default.removeItem(atPath: marker)
        // Its entry reaches the hub now, sealed with the old key and signed by a device that held it then (the sync
        // may then stop at writing anything new: what it could still write depends on what it has to send).
        func entries() throws -> Int {
            Int(
                try git(["-C", daemon.root + "/hub.git", "rev-list", "--count", "--glob=refs/truce/sealed/replicas/*"]).output.trimmingCharacters(
                    in: .whitespacesAndNewlines)) ?? 0
        }
        let before = try entries()
        _ = try? await revoked.store.sync(with: hub)
        #expect(try entries() > before)
        _ = try await kept.store.sync(with: hub)
        #expect(try kept.store.contents(of: "theirs.md") == .text("before\n"))
        #expect(try kept.store.documents().contains("late.md") == false)
    }
}
