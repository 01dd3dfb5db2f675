import Foundation
internal import TruceCrypto
internal import TruceGit

/// Who may read an encrypted hub: founding it, a new device asking to join, a member approving it, and revoking one.
extension StoreEngine {
    /// Makes the empty hub `remote` an encrypted hub of this store: its key ring's founding entry, with the first
    /// epoch's key sealed to this device and to the recovery code's keys; returns the store's fingerprint.
    func foundEncryptedHub(_ remote: String, recovery: RecoveryCode, environment: SyncEnvironment) throws -> String {
        let cache = try EncryptedHubCache.create(remote, in: repository, environment: environment.transfer)
        do {
            let advertised = try cache.fetch()
            guard advertised.isEmpty else {
                throw cache.failure("it already holds a Truce store's references; an encrypted hub starts from an empty repository")
            }
            let device = try DeviceKeys.ofStore(repository, passphrase: environment.deviceKeyPassphrase)
            let members = [HubMember(signing: device.signing.publicKey, box: device.box.publicKey), recovery.member]
            let keys: [UInt32: SymmetricKey] = [1: SymmetricKey()]
            let entry = KeyRingEntry(
                kind: .founding, sequence: 1, previous: [UInt8](repeating: 0, count: Digest.count), added: members, epoch: 1,
                sealedKeys: members.flatMap { HubKeyRing.sealing(keys, to: $0) })
            try cache.appendToKeyRing(entry, after: nil, signedBy: device.signing)
            _ = try cache.readKeyRing(at: try cache.repository.reference(EncryptedHubCache.ownKeyRing))
            return try cache.storeFingerprint()
        } catch {
            cache.discard()
            throw error
        }
    }

    /// Asks to join the encrypted hub `remote`: pins its key ring and posts this device's public keys for a member to
    /// approve; returns this device's fingerprint and the store's, which the approving device shows too.
    func joinEncryptedHub(_ remote: String, environment: SyncEnvironment) throws -> (device: String, store: String) {
        let cache = try EncryptedHubCache.create(remote, in: repository, environment: environment.transfer)
        do {
            let advertised = try cache.fetch()
            let ring = try cache.readKeyRing(at: advertised[EncryptedHubCache.keyRingReference])
            let device = try DeviceKeys.ofStore(repository, passphrase: environment.deviceKeyPassphrase)
            if !ring.members.contains(where: { $0.signing == device.signing.publicKey }) {
                let request = JoinRequest(member: HubMember(signing: device.signing.publicKey, box: device.box.publicKey))
                let blob = try cache.repository.writeBlob(Data(request.encoded(signedBy: device.signing)))
                let commit = try cache.repository.writeCommit(
                    tree: try cache.repository.writeTree([TreeEntry(name: "request", id: blob, isTree: false)]), parents: [],
                    author: SealedEntry.signature, committer: SealedEntry.signature, message: "Join request\n")
                let name = "refs/sealed/join"
                try cache.move(name, to: commit)
                try cache.push([("+" + name, EncryptedHubCache.joinsRoot + device.fingerprint)])
            }
            return (device.fingerprint, try cache.storeFingerprint())
        } catch {
            cache.discard()
            throw error
        }
    }

    /// The devices of the encrypted hub `remote`, and those asking to join.
    func encryptedHubDevices(
        _ remote: String, environment: SyncEnvironment
    ) throws -> (members: [HubMember], asking: [HubMember], recovery: HubMember?, store: String, device: String) {
        let cache = try EncryptedHubCache.open(remote, in: repository, environment: environment.transfer)
        let advertised = try cache.fetch()
        let ring = try cache.readKeyRing(at: advertised[EncryptedHubCache.keyRingReference])
        let device = try DeviceKeys.ofStore(repository, passphrase: environment.deviceKeyPassphrase).fingerprint
        return (ring.members, try joinRequests(in: cache, advertised: advertised).map(\.member), ring.recovery, try cache.storeFingerprint(), device)
    }

    private func joinRequests(in cache: EncryptedHubCache, advertised: [String: ObjectID]) throws -> [JoinRequest] {
        try advertised.filter { $0.key.hasPrefix(EncryptedHubCache.joinsRoot) }.sorted { $0.key < $1.key }.compactMap { name, commit in
            let tree = try cache.repository.readCommit(commit).tree
            guard let blob = try cache.repository.entry(at: "request", inTree: tree),
                let request = try? JoinRequest.decode([UInt8](try cache.repository.readBlob(blob.id))),
                name == EncryptedHubCache.joinsRoot + request.member.fingerprint
            else { return nil }
            return request
        }
    }

    /// Approves the device whose fingerprint is `fingerprint`, asking to join `remote`: every epoch's key sealed to it.
    func approveDevice(_ fingerprint: String, on remote: String, environment: SyncEnvironment) throws {
        let view = try encryptedHubView(remote, environment: environment)
        guard let request = try joinRequests(in: view.cache, advertised: view.advertised).first(where: { $0.member.fingerprint == fingerprint })
        else { throw view.cache.failure("no device \(fingerprint) asks to join it ('truce hub devices' lists those that do)") }
        guard view.ring.revokedFrom[request.member.signing] == nil else { throw view.cache.failure("device \(fingerprint) was revoked") }
        let entry = KeyRingEntry(
            kind: .approval, sequence: view.ring.sequence + 1, previous: view.ring.digest, added: [request.member], epoch: view.ring.epoch,
            sealedKeys: HubKeyRing.sealing(view.keys, to: request.member))
        try view.cache.appendToKeyRing(
            entry, after: view.advertised[EncryptedHubCache.keyRingReference], signedBy: view.device.signing,
            deleting: [EncryptedHubCache.joinsRoot + fingerprint])
    }

    /// Revokes the device `fingerprint` from `remote`: a new epoch whose key goes to every other member, and that
    /// device's replicas frozen at what was read of them here.
    func revokeDevice(_ fingerprint: String, on remote: String, environment: SyncEnvironment) throws {
        let view = try encryptedHubView(remote, environment: environment)
        try view.cache.openNewEntries(
            advertised: view.advertised, ring: view.ring, keys: view.keys, ownSlot: view.slot, device: view.device.signing.publicKey)
        guard let revoked = view.ring.members.first(where: { $0.fingerprint == fingerprint }) else {
            throw view.cache.failure("device \(fingerprint) is not one of its devices ('truce hub devices' lists them)")
        }
        guard revoked.signing != view.device.signing.publicKey else { throw view.cache.failure("a device does not revoke itself") }
        var frozen: [KeyRingEntry.FrozenSlot] = []
        for slot in try view.cache.openedSlots() {
            if let state = try view.cache.state(ofSlot: slot), state.signer == revoked.signing {
                frozen.append(KeyRingEntry.FrozenSlot(slot: slot, sequence: state.sequence))
            }
        }
        let epoch = view.ring.epoch + 1
        let newKey = [epoch: SymmetricKey()]
        let remaining = view.ring.members.filter { $0 != revoked }
        let entry = KeyRingEntry(
            kind: .revocation, sequence: view.ring.sequence + 1, previous: view.ring.digest, revoked: [revoked.signing], frozen: frozen,
            epoch: epoch, sealedKeys: remaining.flatMap { HubKeyRing.sealing(newKey, to: $0) })
        try view.cache.appendToKeyRing(entry, after: view.advertised[EncryptedHubCache.keyRingReference], signedBy: view.device.signing)
    }
}

/// A device's request to join an encrypted hub (`refs/truce/sealed/joins/<fingerprint>`): its public keys, signed by
/// itself so that they belong together. A member checks the fingerprint with the person before approving it.
struct JoinRequest {
    let member: HubMember
    static let magic = Array("truce join 1\n".utf8)

    func encoded(signedBy signer: SigningKeyPair) -> [UInt8] {
        let bytes = Self.magic + member.signing + member.box
        return bytes + signer.sign(bytes)
    }

    static func decode(_ bytes: [UInt8]) throws(HubFormatError) -> JoinRequest {
        guard bytes.count == magic.count + 64 + SigningKeyPair.signatureCount, bytes.starts(with: magic) else {
            throw HubFormatError("it is not a join request")
        }
        let signing = Array(bytes[magic.count..<(magic.count + 32)]), box = Array(bytes[(magic.count + 32)..<(magic.count + 64)])
        guard
            SigningKeyPair.isValid(
                Array(bytes.suffix(SigningKeyPair.signatureCount)), of: Array(bytes.dropLast(SigningKeyPair.signatureCount)), by: signing)
        else { throw HubFormatError("its signature does not match") }
        return JoinRequest(member: HubMember(signing: signing, box: box))
    }
}

extension StoreEngine {
    /// Restores access to the encrypted hub `remote` with its recovery code: the code's keys, a member since the
    /// founding, approve this device. Returns this device's fingerprint.
    func recoverEncryptedHub(_ remote: String, code: RecoveryCode, environment: SyncEnvironment) throws -> String {
        let cache = try EncryptedHubCache.create(remote, in: repository, environment: environment.transfer)
        do {
            let advertised = try cache.fetch()
            let ring = try cache.readKeyRing(at: advertised[EncryptedHubCache.keyRingReference])
            let recovery = DeviceKeys(signing: code.signing, box: code.box)
            let keys = ring.keys(openedBy: recovery)
            guard ring.members.contains(code.member), !keys.isEmpty else { throw cache.failure("the recovery code is not this hub's") }
            let device = try DeviceKeys.ofStore(repository, passphrase: environment.deviceKeyPassphrase)
            let member = HubMember(signing: device.signing.publicKey, box: device.box.publicKey)
            if !ring.members.contains(member) {
                let entry = KeyRingEntry(
                    kind: .approval, sequence: ring.sequence + 1, previous: ring.digest, added: [member], epoch: ring.epoch,
                    sealedKeys: HubKeyRing.sealing(keys, to: member))
                try cache.appendToKeyRing(entry, after: advertised[EncryptedHubCache.keyRingReference], signedBy: recovery.signing)
            }
            return device.fingerprint
        } catch {
            cache.discard()
            throw error
        }
    }
}
