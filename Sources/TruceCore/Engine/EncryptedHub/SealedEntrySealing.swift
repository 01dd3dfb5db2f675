import Foundation
internal import TruceCrypto
internal import TruceGit

/// Writing to an encrypted hub: what one sync sends, sealed as the next entry of this replica's chain.
///
/// The sync pushes to the cache as to a hub on a local path, but its packs
/// go to a staging directory (`sealing/`) the cache does not read. They
/// are sealed into an entry, the entry is written here as this replica's
/// chain, opened into the cache like any other (so the cache takes the
/// objects only from what the hub will hold), and pushed. A sync killed
/// after the entry is written pushes it next time; one killed before leaves
/// staged packs that the next sync's push writes again.
final class SealedSend {
    let cache: EncryptedHubCache
    let device: DeviceKeys
    let ring: HubKeyRing
    let keys: [UInt32: SymmetricKey]
    let replica: String
    let slot: String

    /// Hears what the pushes to the hub send: a sync's traffic is the hub's, not the cache's.
    let meter: TrafficMeter?

    init(
        cache: EncryptedHubCache, device: DeviceKeys, ring: HubKeyRing, keys: [UInt32: SymmetricKey], replica: String, slot: String,
        meter: TrafficMeter? = nil
    ) {
        (self.cache, self.device, self.ring, self.keys, self.replica, self.slot) = (cache, device, ring, keys, replica, slot)
        self.meter = meter
    }

    /// Where the sync's push writes its packs (with a trailing slash), emptied of what a killed sync left there.
    func stagingDirectory() throws -> String {
        let directory = cache.repository.gitDirectory + "sealing/"
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    /// Seals `packs` (names in the staging directory) and `manifest` as this replica's next entry, opens it into the
    /// cache and pushes it to the hub.
    func seal(packs: [String], manifest: ObjectID, cancellation: Cancellation?) throws {
        let epoch = ring.epoch
        guard let key = keys[epoch], ring.mayWrite(device.signing.publicKey, epoch: epoch) else {
            throw cache.failure("this device may not write to it: it was revoked")
        }
        let repository = cache.repository
        let last = try cache.state(ofSlot: slot)
        let header = SealedEntry.Header(epoch: epoch, slot: slot, sequence: (last?.sequence ?? 0) + 1, signer: device.signing.publicKey)
        let staging = repository.gitDirectory + "sealing/"
        var tree: [TreeEntry] = [], parts: [SealedEntry.Part] = []
        for (index, name) in packs.enumerated() {
            let pack = [UInt8](try Data(contentsOf: URL(fileURLWithPath: staging + name + ".pack")))
            let sealed = SealedEntry.sealPart(pack, index: index, header: header, with: key)
            tree.append(TreeEntry(name: SealedEntry.partName(index), id: try repository.writeBlob(Data(sealed)), isTree: false))
            parts.append(SealedEntry.Part(digest: Digest.blake2b(sealed), length: UInt64(pack.count)))
        }
        var seen: [String: UInt64] = [:]
        for other in try cache.openedSlots() {
            if other != slot, let state = try cache.state(ofSlot: other) { seen[other] = state.sequence }
        }
        let entry = SealedEntry(
            header: header, replica: replica, manifest: manifest, previous: last?.digest ?? [UInt8](repeating: 0, count: Digest.count),
            seen: seen, parts: parts)
        let index = try repository.writeBlob(Data(entry.sealedIndex(with: key, signedBy: device.signing)))
        let commit = try repository.writeCommit(
            tree: try repository.writeTree([TreeEntry(name: SealedEntry.indexName, id: index, isTree: false)] + tree),
            parents: last.map { [$0.commit] } ?? [], author: SealedEntry.signature, committer: SealedEntry.signature, message: "Sealed entry\n")
        try cache.move(EncryptedHubCache.ownChainRoot + slot, to: commit)
        try? FileManager.default.removeItem(atPath: staging)
        var seenNow: [String: (sequence: UInt64, by: String)] = [:]
        try cache.openChain(slot, to: commit, ring: ring, keys: keys, seen: &seenNow, advertised: [:])
        try pushOwnChain(cancellation: cancellation)
    }

    /// Pushes this replica's chain as written here to the hub, and remembers that the hub took it.
    func pushOwnChain(cancellation: Cancellation?) throws {
        guard let local = try cache.repository.reference(EncryptedHubCache.ownChainRoot + slot) else { return }
        try cache.push(
            [(EncryptedHubCache.ownChainRoot + slot, EncryptedHubCache.replicasRoot + slot)], progress: meter.map { $0.sending },
            cancellation: cancellation)
        try cache.move(EncryptedHubCache.acknowledgedRoot + slot, to: local)
    }
}
