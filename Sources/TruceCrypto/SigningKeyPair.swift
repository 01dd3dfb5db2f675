internal import CSodium

/// An Ed25519 key pair (`crypto_sign`): a device signs what it writes to an encrypted hub, and anyone holding the
/// public key checks it.
package struct SigningKeyPair: Sendable {
    package static let publicKeyCount = Int(crypto_sign_publickeybytes())
    package static let signatureCount = Int(crypto_sign_bytes())
    package static let seedCount = Int(crypto_sign_seedbytes())

    package let publicKey: [UInt8]
    /// The 64-byte secret key (seed and public key, as libsodium keeps it).
    package let secretKey: SecretBytes

    /// A new random key pair.
    package init() {
        Sodium.ready()
        var publicKey = [UInt8](repeating: 0, count: Self.publicKeyCount)
        secretKey = SecretBytes(count: Int(crypto_sign_secretkeybytes())) { secret in
            _ = crypto_sign_keypair(&publicKey, secret)
        }
        self.publicKey = publicKey
    }

    /// The key pair a 32-byte seed gives, the same every time (a recovery code's).
    package init(seed: SecretBytes) {
        precondition(seed.count == Self.seedCount, "an Ed25519 seed has \(Self.seedCount) bytes")
        Sodium.ready()
        var publicKey = [UInt8](repeating: 0, count: Self.publicKeyCount)
        secretKey = SecretBytes(count: Int(crypto_sign_secretkeybytes())) { secret in
            seed.withBytes { _ = crypto_sign_seed_keypair(&publicKey, secret, $0) }
        }
        self.publicKey = publicKey
    }

    /// A key pair read back from its secret key; nil when `secretKey` is not one libsodium wrote.
    package init?(secretKey: SecretBytes) {
        guard secretKey.count == Int(crypto_sign_secretkeybytes()) else { return nil }
        Sodium.ready()
        var publicKey = [UInt8](repeating: 0, count: Self.publicKeyCount)
        let status = secretKey.withBytes { crypto_sign_ed25519_sk_to_pk(&publicKey, $0) }
        guard status == 0 else { return nil }
        (self.publicKey, self.secretKey) = (publicKey, secretKey)
    }

    /// The detached signature of `message`.
    package func sign(_ message: [UInt8]) -> [UInt8] {
        var signature = [UInt8](repeating: 0, count: Self.signatureCount)
        secretKey.withBytes { _ = crypto_sign_detached(&signature, nil, message, UInt64(message.count), $0) }
        return signature
    }

    /// Whether `signature` is `publicKey`'s signature of `message`.
    package static func isValid(_ signature: [UInt8], of message: [UInt8], by publicKey: [UInt8]) -> Bool {
        Sodium.ready()
        guard signature.count == signatureCount, publicKey.count == publicKeyCount else { return false }
        return crypto_sign_verify_detached(signature, message, UInt64(message.count), publicKey) == 0
    }
}
