import Foundation
internal import TruceCrypto
internal import TruceGit

/// A sync with an encrypted hub: the hub's new entries checked and opened into the cache, then a sync with the cache
/// as with a hub on a local path, whose send is sealed and pushed (`SealedSend`).
extension StoreEngine {
    /// The hub's state as this device may read it: the cache, its key ring, the keys this device holds, its slot.
    struct EncryptedHubView {
        let cache: EncryptedHubCache
        let advertised: [String: ObjectID]
        let ring: HubKeyRing
        let device: DeviceKeys
        let keys: [UInt32: SymmetricKey]
        let replica: String
        let slot: String
    }

    /// Fetches `remote`'s sealed references and reads its key ring; fails when this device holds none of its keys.
    func encryptedHubView(
        _ remote: String, environment: SyncEnvironment, progress: ((TransferCounts) -> Void)? = nil, cancellation: Cancellation? = nil
    ) throws -> EncryptedHubView {
        let cache = try EncryptedHubCache.open(remote, in: repository, environment: environment.transfer)
        let device = try DeviceKeys.ofStore(repository, passphrase: environment.deviceKeyPassphrase)
        let advertised = try cache.fetch(progress: progress, cancellation: cancellation)
        let ring = try cache.readKeyRing(at: advertised[EncryptedHubCache.keyRingReference])
        let keys = ring.keys(openedBy: device)
        let replica = try replicaID()
        guard let slot = EncryptedHubCache.slot(of: replica, keys: keys) else {
            throw cache.failure(
                "this device (\(device.fingerprint)) holds none of its keys yet: approve it from a device of the store with 'truce hub approve \(device.fingerprint)'"
            )
        }
        return EncryptedHubView(cache: cache, advertised: advertised, ring: ring, device: device, keys: keys, replica: replica, slot: slot)
    }

    /// Opens what is new on the encrypted hub `remote` and returns a session with its cache whose sends are sealed;
    /// the caller runs its exchange.
    func encryptedSyncSession(
        _ remote: String, environment: SyncEnvironment, progress: (@Sendable (SyncReport.Traffic) -> Void)?, cancellation: Cancellation?
    ) throws -> SyncSession {
        // The report counts what crossed the network to the hub: the download here, the pushes of sealed entries.
        let meter = TrafficMeter(progress: progress, instrumentation: instrumentation)
        let view = try encryptedHubView(remote, environment: environment, progress: meter.received, cancellation: cancellation)
        try view.cache.openNewEntries(
            advertised: view.advertised, ring: view.ring, keys: view.keys, ownSlot: view.slot, device: view.device.signing.publicKey)
        let send = SealedSend(
            cache: view.cache, device: view.device, ring: view.ring, keys: view.keys, replica: view.replica, slot: view.slot, meter: meter)
        // An entry a killed sync wrote but did not push goes first.
        if view.advertised[EncryptedHubCache.replicasRoot + view.slot]
            != (try view.cache.repository.reference(EncryptedHubCache.ownChainRoot + view.slot))
        {
            try send.pushOwnChain(cancellation: cancellation)
            meter.sendFinished()
        }
        let session = try SyncSession(remote: view.cache.repository.path, engine: self, environment: .empty, progress: progress, meter: meter)
        session.sealing = send
        session.shownRemote = remote
        return session
    }
}
