import Foundation
internal import TruceCrypto
internal import TruceGit

/// One entry of a replica's chain on an encrypted hub (`refs/truce/sealed/replicas/<slot>`, one commit each): the
/// objects that replica sent in one sync, as packs, and the manifest they bring it to, sealed with the hub's key of
/// one epoch and signed by the replica's device.
///
/// The commit's tree holds an `index` blob and a `part-N` blob per pack.
/// The index starts in the clear with what a reader needs before it can
/// open anything (the epoch, the slot, the sequence, the signing key), all
/// of it authenticated; the rest is sealed: the replica's id, its manifest,
/// the digest of its previous index (a chain the hub cannot cut or reorder),
/// what this replica had read of every other slot (so a hub that withholds
/// entries is caught by any reader who sees an entry that read them), and
/// the digest of every part. The whole index is signed.
struct SealedEntry: Sendable {
    struct Header: Equatable, Sendable {
        let epoch: UInt32
        let slot: String
        let sequence: UInt64
        let signer: [UInt8]
    }

    struct Part: Equatable, Sendable {
        let digest: [UInt8]
        let length: UInt64
    }

    let header: Header
    let replica: String
    let manifest: ObjectID?
    let previous: [UInt8]
    /// The sequence this replica had read of each other slot when it wrote this entry.
    let seen: [String: UInt64]
    let parts: [Part]

    static let magic = Array("truce sealed 1\n".utf8)
    static let indexName = "index"
    static func partName(_ index: Int) -> String { "part-\(index)" }
    /// Author and committer of every sealed commit: no name, no date.
    static let signature = Signature(name: "truce", email: "sealed@truce", time: 0, offsetMinutes: 0)

    private static func headerBytes(_ header: Header) -> [UInt8] {
        var writer = ByteFieldWriter()
        writer.raw(magic)
        writer.integer(header.epoch)
        writer.text(header.slot)
        writer.integer(header.sequence)
        writer.raw(header.signer)
        return writer.bytes
    }

    /// The index blob: the header in the clear, the rest sealed with `key` and padded, all signed by `signer`.
    func sealedIndex(with key: SymmetricKey, signedBy signer: SigningKeyPair) -> [UInt8] {
        var writer = ByteFieldWriter()
        writer.text(replica)
        writer.field(manifest?.bytes ?? [])
        writer.field(previous)
        writer.integer(UInt32(seen.count))
        for (slot, sequence) in seen.sorted(by: { $0.key < $1.key }) {
            writer.text(slot)
            writer.integer(sequence)
        }
        writer.integer(UInt32(parts.count))
        for part in parts {
            writer.raw(part.digest)
            writer.integer(part.length)
        }
        let clear = Self.headerBytes(header)
        let sealed = key.seal(Padding.pad(writer.bytes, toMultipleOf: 256), additional: clear)
        var signed = ByteFieldWriter()
        signed.raw(clear)
        signed.field(sealed)
        return signed.bytes + signer.sign(signed.bytes)
    }

    /// The header of an index blob, once its signature is checked against the key it names.
    static func header(ofIndex bytes: [UInt8]) throws(HubFormatError) -> Header {
        try split(bytes).header
    }

    private static func split(_ bytes: [UInt8]) throws(HubFormatError) -> (header: Header, clear: [UInt8], sealed: [UInt8]) {
        let signatureCount = SigningKeyPair.signatureCount
        guard bytes.count > magic.count + signatureCount, bytes.starts(with: magic) else { throw HubFormatError("it is not a sealed entry") }
        let signed = Array(bytes.dropLast(signatureCount))
        var reader = ByteFieldReader(signed)
        _ = try reader.raw(magic.count, "magic")
        let epoch = try reader.integer(UInt32.self, "epoch")
        let slot = try reader.text("slot")
        let sequence = try reader.integer(UInt64.self, "sequence")
        let signer = try reader.raw(SigningKeyPair.publicKeyCount, "signer")
        let clear = reader.consumed
        guard SigningKeyPair.isValid(Array(bytes.suffix(signatureCount)), of: signed, by: signer) else {
            throw HubFormatError("its signature does not match")
        }
        let sealed = try reader.field("sealed index")
        guard reader.isAtEnd else { throw HubFormatError("it has bytes after its sealed index") }
        return (Header(epoch: epoch, slot: slot, sequence: sequence, signer: signer), clear, sealed)
    }

    /// The entry an index blob holds, opened with `key` (its header's epoch's).
    static func open(index bytes: [UInt8], with key: SymmetricKey) throws(HubFormatError) -> SealedEntry {
        let (header, clear, sealed) = try split(bytes)
        let padded: [UInt8]
        do { padded = try key.open(sealed, additional: clear) } catch {
            throw HubFormatError("its index does not open with the key of epoch \(header.epoch)")
        }
        let plain: [UInt8]
        do { plain = try Padding.unpad(padded, blockSize: 256) } catch { throw HubFormatError("its index is not padded as Truce pads") }
        var reader = ByteFieldReader(plain)
        let replica = try reader.text("replica")
        let manifestBytes = try reader.field("manifest", atMost: 20)
        guard manifestBytes.isEmpty || manifestBytes.count == 20 else { throw HubFormatError("its manifest id is not 20 bytes") }
        let previous = try reader.field("previous digest", atMost: Digest.count)
        var seen: [String: UInt64] = [:]
        for _ in 0..<(try reader.count("slots seen", minimumSize: 12)) {
            seen[try reader.text("slot seen")] = try reader.integer(UInt64.self, "sequence seen")
        }
        var parts: [Part] = []
        for _ in 0..<(try reader.count("parts", minimumSize: 40)) {
            parts.append(Part(digest: try reader.raw(Digest.count, "part digest"), length: try reader.integer(UInt64.self, "part length")))
        }
        guard reader.isAtEnd else { throw HubFormatError("its index has bytes after its last field") }
        return SealedEntry(
            header: header, replica: replica, manifest: manifestBytes.isEmpty ? nil : ObjectID(bytes: manifestBytes[...]),
            previous: previous, seen: seen, parts: parts)
    }

    /// Additional data of part `index`: which slot, sequence and place it belongs to, so a part moved elsewhere fails.
    private static func partContext(_ header: Header, _ index: Int) -> [UInt8] {
        var writer = ByteFieldWriter()
        writer.raw(Array("part".utf8))
        writer.text(header.slot)
        writer.integer(header.sequence)
        writer.integer(UInt32(index))
        return writer.bytes
    }

    /// A pack sealed as part `index` of an entry with `header`, padded to its size bucket.
    static func sealPart(_ pack: [UInt8], index: Int, header: Header, with key: SymmetricKey) -> [UInt8] {
        key.seal(Padding.pad(pack, toMultipleOf: Padding.bucket(for: pack.count)), additional: partContext(header, index))
    }

    /// The pack of part `index`, once its digest is the one the index lists.
    func openPart(_ sealed: [UInt8], index: Int, with key: SymmetricKey) throws(HubFormatError) -> [UInt8] {
        guard index < parts.count, Digest.blake2b(sealed) == parts[index].digest else {
            throw HubFormatError("its part \(index) is not the one its index lists")
        }
        do {
            let padded = try key.open(sealed, additional: Self.partContext(header, index))
            let pack = try Padding.unpad(padded, blockSize: Padding.bucket(for: Int(parts[index].length)))
            guard pack.count == parts[index].length else { throw HubFormatError("its part \(index) has another length than listed") }
            return pack
        } catch let error as HubFormatError {
            throw error
        } catch {
            throw HubFormatError("its part \(index) does not open")
        }
    }
}
