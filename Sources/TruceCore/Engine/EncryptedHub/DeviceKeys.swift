import Foundation
internal import TruceCrypto
internal import TruceGit

/// This store's keys for encrypted hubs: an Ed25519 pair that signs what it writes there, and an X25519 pair that the
/// hub's keys are sealed to. Made on first use, kept in the store's git directory (`truce-device.key`, mode 0600),
/// never sent anywhere: a hub sees the public keys only. With a passphrase, the file holds them sealed with a key
/// Argon2id derives from it (libsodium's interactive limits, stored beside the salt), and reading them needs it.
///
/// Each store is a device of its own: a copy made with `cp -r` holds the
/// same keys and writes as the same device, which is why a new device
/// starts from a new store and joins.
struct DeviceKeys: Sendable {
    let signing: SigningKeyPair
    let box: BoxKeyPair

    static func path(in repository: Repository) -> String { repository.gitDirectory + "truce-device.key" }
    static let magic = Array("truce device key 1\n".utf8)
    static let sealedMagic = Array("truce device key 1 sealed\n".utf8)

    /// A short name for a device's signing key that people compare by eye: 16 hex digits of its BLAKE2b digest, in fours.
    static func fingerprint(of signingKey: [UInt8]) -> String {
        let hex = Digest.blake2b(signingKey).prefix(8).map { String(format: "%02x", $0) }.joined()
        return stride(from: 0, to: hex.count, by: 4).map { start in
            String(hex.dropFirst(start).prefix(4))
        }.joined(separator: "-")
    }

    var fingerprint: String { Self.fingerprint(of: signing.publicKey) }

    /// This store's keys, made and written the first time they are asked for: sealed with `passphrase` when given.
    static func ofStore(_ repository: Repository, passphrase: String?) throws -> DeviceKeys {
        if let existing = try existing(in: repository, passphrase: passphrase) { return existing }
        let keys = DeviceKeys(signing: SigningKeyPair(), box: BoxKeyPair())
        let path = path(in: repository)
        var secrets = keys.signing.secretKey.exposed + keys.box.secretKey.exposed
        defer { secrets.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        var file = magic + secrets
        if let passphrase {
            var writer = ByteFieldWriter()
            writer.raw(sealedMagic)
            let salt = SecretBytes(random: PassphraseKey.saltCount).exposed
            writer.raw(salt)
            writer.integer(PassphraseKey.operations)
            writer.integer(UInt64(PassphraseKey.memory))
            let key = try PassphraseKey.derive(Array(passphrase.utf8), salt: salt)
            writer.raw(key.seal(secrets, additional: sealedMagic + salt))
            file = writer.bytes
        }
        defer { file.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        // O_EXCL on the final name: two syncs that make keys at once keep one pair, the first written.
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if descriptor < 0 {
            guard errno == EEXIST, let theirs = try existing(in: repository, passphrase: passphrase) else {
                throw DurableFiles.failure("create \(path)")
            }
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

    /// The keys written before, nil when this store has none yet; sealed ones open only with `passphrase`.
    static func existing(in repository: Repository, passphrase: String?) throws -> DeviceKeys? {
        let path = path(in: repository)
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        var bytes = [UInt8](data)
        defer { bytes.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        let malformed = TruceError.invalidConfiguration("\(path) is not a device key file Truce wrote")
        var secrets: [UInt8]
        if bytes.starts(with: sealedMagic) {
            guard let passphrase else {
                throw TruceError.invalidConfiguration(
                    "this store's device key is sealed with a passphrase: give it (TRUCE_KEY_PASSPHRASE, or SyncEnvironment.deviceKeyPassphrase)")
            }
            var reader = ByteFieldReader(bytes)
            do {
                _ = try reader.raw(sealedMagic.count, "magic")
                let salt = try reader.raw(PassphraseKey.saltCount, "salt")
                let operations = try reader.integer(UInt64.self, "operations")
                let memory = try reader.integer(UInt64.self, "memory")
                // Limits far above libsodium's sensitive ones are a damaged or hostile file, not a key to spend minutes on.
                guard operations <= 16, memory <= 1 << 31 else { throw malformed }
                let key = try PassphraseKey.derive(Array(passphrase.utf8), salt: salt, operations: operations, memory: Int(memory))
                secrets = try key.open(reader.rest, additional: sealedMagic + salt)
            } catch is CryptoError {
                throw TruceError.invalidConfiguration("the passphrase given does not open this store's device key")
            } catch is HubFormatError {
                throw malformed
            }
        } else {
            guard bytes.starts(with: magic) else { throw malformed }
            secrets = Array(bytes.dropFirst(magic.count))
        }
        defer { secrets.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        let signingCount = 64, boxCount = 32
        guard secrets.count == signingCount + boxCount,
            let signing = SigningKeyPair(secretKey: SecretBytes(copying: secrets[..<signingCount])),
            let box = BoxKeyPair(secretKey: SecretBytes(copying: secrets[signingCount...]))
        else { throw malformed }
        return DeviceKeys(signing: signing, box: box)
    }
}
