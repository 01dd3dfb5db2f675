import Foundation
internal import TruceGit

/// Encrypted hubs: a git server that holds this store's versions only as ciphertext, read by the devices holding its
/// keys. A sync with one is `sync(with:)`, as with any hub, once this store founded or joined it.
extension DocumentStore {
    /// Makes the empty repository at `remote` this store's encrypted hub, and returns its devices (this one) with the
    /// recovery code, shown this once. The next `sync(with: remote)` sends every version, sealed.
    public func encryptHub(_ remote: String, environment: SyncEnvironment? = nil) async throws(TruceError) -> EncryptedHubDevices {
        let code = RecoveryCode.random()
        let store = try await onOwnEngine(environment: environment) { engine, given in
            try engine.foundEncryptedHub(remote, recovery: code, environment: given)
        }
        var devices = try await encryptedHubDevices(on: remote, environment: environment)
        (devices.store, devices.recoveryCode) = (store, code.text)
        return devices
    }

    /// Asks to join the encrypted hub at `remote` from this store (a new one, on the new device), and returns the
    /// fingerprints to compare: once a device of the store approves this one (`approveDevice`), syncs read everything.
    public func joinEncryptedHub(_ remote: String, environment: SyncEnvironment? = nil) async throws(TruceError) -> EncryptedHubDevices {
        let ids = try await onOwnEngine(environment: environment) { engine, given in try engine.joinEncryptedHub(remote, environment: given) }
        return EncryptedHubDevices(store: ids.store, thisDevice: ids.device, members: [], asking: [ids.device])
    }

    /// The devices of the encrypted hub at `remote`, and those asking to join.
    public func encryptedHubDevices(on remote: String, environment: SyncEnvironment? = nil) async throws(TruceError) -> EncryptedHubDevices {
        try await onOwnEngine(environment: environment) { engine, given in
            let listed = try engine.encryptedHubDevices(remote, environment: given)
            return EncryptedHubDevices(
                store: listed.store, thisDevice: listed.device, members: listed.members.map(\.fingerprint),
                asking: listed.asking.map(\.fingerprint), recovery: listed.recovery?.fingerprint)
        }
    }

    /// Lets the device `fingerprint`, which asked to join `remote`, read it: every key of the hub sealed to it.
    public func approveDevice(_ fingerprint: String, on remote: String, environment: SyncEnvironment? = nil) async throws(TruceError) {
        try await onOwnEngine(environment: environment) { engine, given in try engine.approveDevice(fingerprint, on: remote, environment: given)
        }
    }

    /// Revokes the device `fingerprint` from `remote`: what is written after it is sealed with a new key it never
    /// gets, and what its replicas write after it is not read. The other devices still read all history.
    public func revokeDevice(_ fingerprint: String, on remote: String, environment: SyncEnvironment? = nil) async throws(TruceError) {
        try await onOwnEngine(environment: environment) { engine, given in try engine.revokeDevice(fingerprint, on: remote, environment: given)
        }
    }

    /// Restores access to the encrypted hub at `remote` from this store (a new one) with the recovery code printed
    /// when it was founded; the next sync reads everything.
    public func recoverEncryptedHub(_ remote: String, recoveryCode: String, environment: SyncEnvironment? = nil) async throws(TruceError)
        -> EncryptedHubDevices
    {
        guard let code = RecoveryCode(text: recoveryCode) else {
            throw .invalidRemote(remote, reason: "that is not a recovery code (54 digits and letters, in groups of four)")
        }
        _ = try await onOwnEngine(environment: environment) { engine, given in
            try engine.recoverEncryptedHub(remote, code: code, environment: given)
        }
        return try await encryptedHubDevices(on: remote, environment: environment)
    }

    private func onOwnEngine<Result: Sendable>(
        environment: SyncEnvironment? = nil, _ body: @escaping @Sendable (StoreEngine, SyncEnvironment) throws -> Result
    ) async throws(TruceError) -> Result {
        let given = environment ?? syncEnvironment
        return try await BlockingExecutor.run { [access] (_) throws(TruceError) -> Result in
            try access.withOwnEngine { engine in try body(engine, given) }
        }
    }
}
