import Foundation

/// Encrypted hubs: a git server that holds this store's versions only as ciphertext, read by the devices holding its
/// keys. A sync with one is `sync(with:)`, as with any hub, once this store founded or joined it.
extension DocumentStore {
    /// Whether this store syncs with `remote` as an encrypted hub (it founded, joined or recovered it): a sync with it
    /// then sends only sealed entries, and never falls back to plain text.
    public func isEncryptedHub(_ remote: String) -> Bool {
        EncryptedHubs(access: access, environment: syncEnvironment).isEncrypted(remote)
    }

    /// Makes the empty repository at `remote` this store's encrypted hub, and returns its devices (this one) with the
    /// recovery code, shown this once. The next `sync(with: remote)` sends every version, sealed.
    public func encryptHub(_ remote: String, environment: SyncEnvironment? = nil) async throws(TruceError) -> EncryptedHubDevices {
        try await EncryptedHubs(access: access, environment: syncEnvironment, overriddenBy: environment).found(remote)
    }

    /// Asks to join the encrypted hub at `remote` from this store (a new one, on the new device), and returns the
    /// fingerprints to compare: once a device of the store approves this one (`approveDevice`), syncs read everything.
    public func joinEncryptedHub(_ remote: String, environment: SyncEnvironment? = nil) async throws(TruceError) -> EncryptedHubDevices {
        try await EncryptedHubs(access: access, environment: syncEnvironment, overriddenBy: environment).join(remote)
    }

    /// The devices of the encrypted hub at `remote`, and those asking to join.
    public func encryptedHubDevices(on remote: String, environment: SyncEnvironment? = nil) async throws(TruceError) -> EncryptedHubDevices {
        try await EncryptedHubs(access: access, environment: syncEnvironment, overriddenBy: environment).devices(on: remote)
    }

    /// Lets the device `fingerprint`, which asked to join `remote`, read it: every key of the hub sealed to it.
    public func approveDevice(_ fingerprint: String, on remote: String, environment: SyncEnvironment? = nil) async throws(TruceError) {
        try await EncryptedHubs(access: access, environment: syncEnvironment, overriddenBy: environment).approve(fingerprint, on: remote)
    }

    /// Revokes the device `fingerprint` from `remote`: what is written after it is sealed with a new key it never
    /// gets, and what its replicas write after it is not read. The other devices still read all history.
    public func revokeDevice(_ fingerprint: String, on remote: String, environment: SyncEnvironment? = nil) async throws(TruceError) {
        try await EncryptedHubs(access: access, environment: syncEnvironment, overriddenBy: environment).revoke(fingerprint, on: remote)
    }

    /// Restores access to the encrypted hub at `remote` from this store (a new one) with the recovery code printed
    /// when it was founded; the next sync reads everything.
    public func recoverEncryptedHub(_ remote: String, recoveryCode: String, environment: SyncEnvironment? = nil) async throws(TruceError)
        -> EncryptedHubDevices
    {
        try await EncryptedHubs(access: access, environment: syncEnvironment, overriddenBy: environment).recover(remote, recoveryCode: recoveryCode)
    }
}
