import Foundation
import TestSupport
import Testing

@testable import TruceCore

/// A store's device key on disk: mode 0600, and sealed when a passphrase is given.
@Suite(.timeLimit(.minutes(10))) struct DeviceKeysTests {
    @Test func theKeyFileIsReadableByItsOwnerAloneAndHoldsNoPublicKeyInTheClearWhenSealed() async throws {
        let bare = try EncryptedHubTests.bareHub(), hub = bare.path
        var environment = SyncEnvironment.empty
        environment.deviceKeyPassphrase = "correct horse battery staple"
        let founder = try TestStore(syncEnvironment: environment)
        let founding = try await founder.store.encryptHub(hub)
        let file = founder.path + "/truce-device.key"
        let attributes = try FileManager.default.attributesOfItem(atPath: file)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
        #expect(bytes.starts(with: Data("truce device key 1 sealed\n".utf8)))

        // Without the passphrase, or with another, the store cannot use its key: one clear error, nothing written.
        let reopened = try DocumentStore(directory: URL(fileURLWithPath: founder.path), mode: .openExisting)
        try reopened.save(.text("one\n"), to: "a.md", device: "founder")
        let before = try founder.git("for-each-ref")
        for passphrase in [nil, "wrong horse"] as [String?] {
            var given = SyncEnvironment.empty
            given.deviceKeyPassphrase = passphrase
            await #expect {
                _ = try await reopened.sync(with: hub, environment: given)
            } throws: { error in
                guard case .invalidConfiguration(let what) = error as? TruceError else { return false }
                return what.contains("passphrase")
            }
        }
        #expect(try founder.git("for-each-ref") == before)
        let synced = try await reopened.sync(with: hub, environment: environment)
        #expect(synced.sent == 1)
        #expect(try await reopened.encryptedHubDevices(on: hub, environment: environment).thisDevice == founding.thisDevice)
    }

    @Test func withoutAPassphraseTheKeyFileIsPlainButStillTheOwnersAlone() async throws {
        let founder = try TestStore()
        let bare = try EncryptedHubTests.bareHub()
        _ = try await founder.store.encryptHub(bare.path)
        let file = founder.path + "/truce-device.key"
        #expect((try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int) == 0o600)
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)).starts(with: Data("truce device key 1\n".utf8)))
    }

    @Test func theSyncEnvironmentNeverShowsThePassphrase() {
        var environment = SyncEnvironment.fromProcess(["TRUCE_KEY_PASSPHRASE": "hunter2", "HOME": "/tmp"])
        #expect(environment.deviceKeyPassphrase == "hunter2")
        #expect(!environment.description.contains("hunter2") && !String(reflecting: environment).contains("hunter2"))
        environment.deviceKeyPassphrase = nil
        #expect(!environment.description.contains("deviceKeyPassphrase"))
    }
}
