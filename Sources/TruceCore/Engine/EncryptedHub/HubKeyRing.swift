import Foundation
internal import TruceCrypto

/// A device of an encrypted hub, as the hub knows it: its public keys, nothing else (no name).
struct HubMember: Equatable, Sendable {
    let signing: [UInt8]
    let box: [UInt8]

    var fingerprint: String { DeviceKeys.fingerprint(of: signing) }
}

/// One entry of an encrypted hub's key ring (`refs/truce/sealed/keyring`, one blob per commit): who joined, who was
/// revoked, and the hub's keys sealed to each device that may read them. Signed by a device that was a member before
/// it; each names the digest of the one before, so the ring is one chain from its first entry.
///
/// The hub sees public keys and sealed boxes only. A key of epoch *n*
/// decrypts what was written in epoch *n*; revoking a device starts a new
/// epoch whose key is sealed to the devices that remain, so the revoked one
/// reads nothing written after it, and every remaining device holds every
/// epoch's key and reads all history.
struct KeyRingEntry: Sendable {
    enum Kind: UInt8, Sendable {
        case founding = 1
        case approval = 2
        case revocation = 3
    }

    /// A hub key sealed to one device's box key.
    struct SealedKey: Sendable {
        let recipient: [UInt8]
        let epoch: UInt32
        let sealed: [UInt8]
    }

    /// The last entry a revoked device's replica may have on the hub: later ones are not read.
    struct FrozenSlot: Sendable {
        let slot: String
        let sequence: UInt64
    }

    var kind: Kind
    var sequence: UInt64
    var previous: [UInt8]
    var added: [HubMember] = []
    var revoked: [[UInt8]] = []
    var frozen: [FrozenSlot] = []
    /// The newest epoch once this entry applies.
    var epoch: UInt32
    var sealedKeys: [SealedKey] = []

    static let magic = Array("truce keyring 1\n".utf8)

    /// The entry's bytes, signed by `signer`.
    func encoded(signedBy signer: SigningKeyPair) -> [UInt8] {
        var writer = ByteFieldWriter()
        writer.raw(Self.magic)
        writer.integer(kind.rawValue)
        writer.integer(sequence)
        writer.raw(signer.publicKey)
        writer.field(previous)
        writer.integer(UInt32(added.count))
        for member in added {
            writer.raw(member.signing)
            writer.raw(member.box)
        }
        writer.integer(UInt32(revoked.count))
        for key in revoked { writer.raw(key) }
        writer.integer(UInt32(frozen.count))
        for slot in frozen {
            writer.text(slot.slot)
            writer.integer(slot.sequence)
        }
        writer.integer(epoch)
        writer.integer(UInt32(sealedKeys.count))
        for key in sealedKeys {
            writer.raw(key.recipient)
            writer.integer(key.epoch)
            writer.field(key.sealed)
        }
        return writer.bytes + signer.sign(writer.bytes)
    }

    /// The entry in `bytes` and the key that signed it, once the signature is checked against that key.
    static func decode(_ bytes: [UInt8]) throws(HubFormatError) -> (entry: KeyRingEntry, signer: [UInt8]) {
        let signatureCount = SigningKeyPair.signatureCount
        guard bytes.count > magic.count + signatureCount, bytes.starts(with: magic) else { throw HubFormatError("it is not a key ring entry") }
        let signed = Array(bytes.dropLast(signatureCount)), signature = Array(bytes.suffix(signatureCount))
        var reader = ByteFieldReader(signed)
        _ = try reader.raw(magic.count, "magic")
        guard let kind = Kind(rawValue: try reader.integer(UInt8.self, "kind")) else { throw HubFormatError("its kind is unknown") }
        let sequence = try reader.integer(UInt64.self, "sequence")
        let signer = try reader.raw(SigningKeyPair.publicKeyCount, "signer")
        guard SigningKeyPair.isValid(signature, of: signed, by: signer) else { throw HubFormatError("its signature does not match") }
        let previous = try reader.field("previous digest", atMost: Digest.count)
        var entry = KeyRingEntry(kind: kind, sequence: sequence, previous: previous, epoch: 0)
        for _ in 0..<(try reader.count("members", minimumSize: 64)) {
            entry.added.append(HubMember(signing: try reader.raw(32, "member"), box: try reader.raw(32, "member")))
        }
        for _ in 0..<(try reader.count("revoked keys", minimumSize: 32)) { entry.revoked.append(try reader.raw(32, "revoked key")) }
        for _ in 0..<(try reader.count("frozen replicas", minimumSize: 12)) {
            entry.frozen.append(FrozenSlot(slot: try reader.text("frozen replica"), sequence: try reader.integer(UInt64.self, "frozen sequence")))
        }
        entry.epoch = try reader.integer(UInt32.self, "epoch")
        for _ in 0..<(try reader.count("sealed keys", minimumSize: 40)) {
            entry.sealedKeys.append(
                SealedKey(
                    recipient: try reader.raw(32, "recipient"), epoch: try reader.integer(UInt32.self, "key epoch"),
                    sealed: try reader.field("sealed key", atMost: 256)))
        }
        guard reader.isAtEnd else { throw HubFormatError("it has bytes after its last field") }
        return (entry, signer)
    }
}

/// An encrypted hub's key ring as its entries, read in order, leave it: the members, the revoked, the epochs.
struct HubKeyRing: Sendable {
    private(set) var members: [HubMember] = []
    /// Each revoked signing key, with the first epoch it holds no key of.
    private(set) var revokedFrom: [[UInt8]: UInt32] = [:]
    private(set) var frozen: [String: UInt64] = [:]
    private(set) var epoch: UInt32 = 0
    private(set) var sealedKeys: [KeyRingEntry.SealedKey] = []
    private(set) var sequence: UInt64 = 0
    /// The digest of the last entry applied, which the next names.
    private(set) var digest = [UInt8](repeating: 0, count: Digest.count)
    /// The digest of the first entry: what a device pins the first time it reads this ring.
    private(set) var foundingDigest: [UInt8]?
    /// The recovery code's keys: the founding entry's second member.
    private(set) var recovery: HubMember?

    /// Applies the entry in `bytes`, once it is signed by a member, follows the last entry and keeps the rules;
    /// nothing changes when it fails.
    mutating func apply(_ bytes: [UInt8]) throws(HubFormatError) {
        let (entry, signer) = try KeyRingEntry.decode(bytes)
        guard entry.sequence == sequence + 1, entry.previous == digest else {
            throw HubFormatError("its key ring entry \(entry.sequence) does not follow entry \(sequence)")
        }
        var next = self
        switch entry.kind {
        case .founding:
            guard sequence == 0, entry.epoch == 1, entry.added.contains(where: { $0.signing == signer }) else {
                throw HubFormatError("its key ring starts with an entry that does not found it")
            }
            next.foundingDigest = Digest.blake2b(bytes)
            next.recovery = entry.added.dropFirst().first
        case .approval, .revocation:
            guard sequence > 0 else { throw HubFormatError("its key ring does not start with a founding entry") }
            guard members.contains(where: { $0.signing == signer }) else {
                throw HubFormatError("key ring entry \(entry.sequence) is signed by \(DeviceKeys.fingerprint(of: signer)), not a member")
            }
            let rises = entry.kind == .revocation ? epoch + 1 : epoch
            guard entry.epoch == rises, entry.kind == .revocation || entry.revoked.isEmpty else {
                throw HubFormatError("key ring entry \(entry.sequence) changes the epoch against its kind")
            }
        }
        for member in entry.added where !next.members.contains(member) {
            guard next.revokedFrom[member.signing] == nil else { throw HubFormatError("key ring entry \(entry.sequence) re-admits a revoked device") }
            next.members.append(member)
        }
        for key in entry.revoked {
            next.members.removeAll { $0.signing == key }
            next.revokedFrom[key] = entry.epoch
        }
        for slot in entry.frozen { next.frozen[slot.slot] = slot.sequence }
        next.epoch = entry.epoch
        next.sealedKeys += entry.sealedKeys
        next.sequence = entry.sequence
        next.digest = Digest.blake2b(bytes)
        self = next
    }

    /// Whether `signer` may write entries sealed with `epoch`'s key: a member then, not revoked by that epoch.
    func mayWrite(_ signer: [UInt8], epoch: UInt32) -> Bool {
        if let revoked = revokedFrom[signer] { return epoch < revoked }
        return members.contains { $0.signing == signer }
    }

    /// Every epoch's key sealed to `device`, opened.
    func keys(openedBy device: DeviceKeys) -> [UInt32: SymmetricKey] {
        var keys: [UInt32: SymmetricKey] = [:]
        for sealed in sealedKeys where sealed.recipient == device.box.publicKey && keys[sealed.epoch] == nil {
            if let opened = try? device.box.open(sealed.sealed), let key = SymmetricKey(opened) { keys[sealed.epoch] = key }
        }
        return keys
    }

    /// Each of `epochs`' keys sealed to `member`.
    static func sealing(_ keys: [UInt32: SymmetricKey], to member: HubMember) -> [KeyRingEntry.SealedKey] {
        keys.keys.sorted().map { epoch in
            KeyRingEntry.SealedKey(recipient: member.box, epoch: epoch, sealed: BoxKeyPair.seal(keys[epoch]!.bytes.exposed, to: member.box))
        }
    }
}
