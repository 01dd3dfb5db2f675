import Foundation
internal import TruceCrypto
internal import TruceGit

/// This store's keys for encrypted hubs: an Ed25519 pair that signs what it writes there, and an X25519 pair that the
/// hub's keys are sealed to. Made on first use, kept in the store's git directory (`truce-device.key`, mode 0600),
/// never sent anywhere: a hub sees the public keys only.
///
/// Each store is a device of its own: a copy made with `cp -r` holds the
/// same keys and writes as the same device, which is why a new device
/// starts from a new store and joins.
struct DeviceKeys: Sendable {
    let signing: SigningKeyPair
    let box: BoxKeyPair

    static func path(in repository: Repository) -> String { repository.gitDirectory + "truce-device.key" }
    static let magic = Array("truce device key 1\n".utf8)

    /// A short name for a device's signing key that people compare by eye: 16 hex digits of its BLAKE2b digest, in fours.
    static func fingerprint(of signingKey: [UInt8]) -> String {
        let hex = Digest.blake2b(signingKey).prefix(8).map { String(format: "%02x", $0) }.joined()
        return stride(from: 0, to: hex.count, by: 4).map { start in
            String(hex.dropFirst(start).prefix(4))
        }.joined(separator: "-")
    }

    var fingerprint: String { Self.fingerprint(of: signing.publicKey) }

    /// This store's keys, made and written the first time they are asked for.
    static func ofStore(_ repository: Repository) throws -> DeviceKeys {
        if let existing = try existing(in: repository) { return existing }
        let keys = DeviceKeys(signing: SigningKeyPair(), box: BoxKeyPair())
        let path = path(in: repository)
        var file = magic
        file += keys.signing.secretKey.exposed
        file += keys.box.secretKey.exposed
        defer { file.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        // O_EXCL on the final name: two syncs that make keys at once keep one pair, the first written.
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if descriptor < 0 {
            guard errno == EEXIST, let theirs = try existing(in: repository) else { throw DurableFiles.failure("create \(path)") }
            return theirs
        }
        var written = false
        defer { if !written { unlink(path) } }
        do {
            defer { close(descriptor) }
            try DurableFiles.writeAll(file, to: descriptor, path: path)
            guard fsync(descriptor) == 0 else { throw DurableFiles.failure("fsync \(path)") }
        }
        DurableFiles.syncDirectory(repository.gitDirectory)
        written = true
        return keys
    }

    /// The keys written before, nil when this store has none yet.
    static func existing(in repository: Repository) throws -> DeviceKeys? {
        let path = path(in: repository)
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        var bytes = [UInt8](data)
        defer { bytes.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        let signingCount = 64, boxCount = 32
        guard bytes.count == magic.count + signingCount + boxCount, bytes.starts(with: magic),
            let signing = SigningKeyPair(secretKey: SecretBytes(copying: bytes[magic.count..<(magic.count + signingCount)])),
            let box = BoxKeyPair(secretKey: SecretBytes(copying: bytes[(magic.count + signingCount)...]))
        else {
            throw TruceError.invalidConfiguration("\(path) is not a device key file Truce wrote")
        }
        return DeviceKeys(signing: signing, box: box)
    }
}
