/// The devices of an encrypted hub, as one of them sees it: fingerprints people compare by eye, never names (the hub
/// knows none).
///
/// A fingerprint is 16 hex digits in groups of four, of a device's public
/// signing key; the store's is of its key ring's founding entry. A device
/// joining shows both; the device that approves it shows both too, and the
/// person checks that they match before approving.
public struct EncryptedHubDevices: Sendable, Equatable, Codable {
    /// The store's fingerprint: the same on every device of this store.
    public var store: String
    /// This device's fingerprint.
    public var thisDevice: String
    /// Every device that may read the hub, the recovery code's keys among them.
    public var members: [String]
    /// Devices that asked to join and wait for approval.
    public var asking: [String]
    /// The recovery code's keys, one of `members`: a device no one holds until the code restores it.
    public var recovery: String?
    /// The recovery code, given once, when the hub is founded: print it and keep it offline.
    public var recoveryCode: String?

    public init(store: String, thisDevice: String, members: [String], asking: [String], recovery: String? = nil, recoveryCode: String? = nil) {
        (self.store, self.thisDevice, self.members, self.asking) = (store, thisDevice, members, asking)
        (self.recovery, self.recoveryCode) = (recovery, recoveryCode)
    }
}
