import Foundation
internal import TruceGit

/// A store's encrypted-hub calls, each on an engine of its own (they wait on the network): what the facade's methods
/// run. What reaching the hub takes from the machine, and the device key's passphrase, are `environment`'s alone.
struct EncryptedHubs: Sendable {
    let access: StoreAccess
    let environment: SyncEnvironment

    init(access: StoreAccess, environment: SyncEnvironment, overriddenBy given: SyncEnvironment? = nil) {
        self.access = access
        self.environment = given ?? environment
    }

    func isEncrypted(_ remote: String) -> Bool {
        (try? access.read { EncryptedHubCache.isEncrypted(remote, in: $0.repository) }) ?? false
    }

    /// Founds the hub at `remote`; its devices, with the recovery code, shown this once.
    func found(_ remote: String) async throws(TruceError) -> EncryptedHubDevices {
        let code = RecoveryCode.random()
        let store = try await onOwnEngine { engine, environment in
            try engine.foundEncryptedHub(remote, recovery: code, environment: environment)
        }
        var devices = try await devices(on: remote)
        (devices.store, devices.recoveryCode) = (store, code.text)
        return devices
    }

    func join(_ remote: String) async throws(TruceError) -> EncryptedHubDevices {
        let ids = try await onOwnEngine { engine, environment in try engine.joinEncryptedHub(remote, environment: environment) }
        return EncryptedHubDevices(store: ids.store, thisDevice: ids.device, members: [], asking: [ids.device])
    }

    func devices(on remote: String) async throws(TruceError) -> EncryptedHubDevices {
        try await onOwnEngine { engine, environment in
            let listed = try engine.encryptedHubDevices(remote, environment: environment)
            return EncryptedHubDevices(
                store: listed.store, thisDevice: listed.device, members: listed.members.map(\.fingerprint),
                asking: listed.asking.map(\.fingerprint), recovery: listed.recovery?.fingerprint)
        }
    }

    func approve(_ fingerprint: String, on remote: String) async throws(TruceError) {
        try await onOwnEngine { engine, environment in try engine.approveDevice(fingerprint, on: remote, environment: environment) }
    }

    func revoke(_ fingerprint: String, on remote: String) async throws(TruceError) {
        try await onOwnEngine { engine, environment in try engine.revokeDevice(fingerprint, on: remote, environment: environment) }
    }

    func recover(_ remote: String, recoveryCode: String) async throws(TruceError) -> EncryptedHubDevices {
        guard let code = RecoveryCode(text: recoveryCode) else {
            throw .invalidRemote(remote, reason: "that is not a recovery code (54 digits and letters, in groups of four)")
        }
        _ = try await onOwnEngine { engine, environment in try engine.recoverEncryptedHub(remote, code: code, environment: environment) }
        return try await devices(on: remote)
    }

    private func onOwnEngine<Result: Sendable>(
        _ body: @escaping @Sendable (StoreEngine, SyncEnvironment) throws -> Result
    ) async throws(TruceError) -> Result {
        try await BlockingExecutor.run { [access, environment] (_) throws(TruceError) -> Result in
            try access.withOwnEngine { engine in try body(engine, environment) }
        }
    }
}
