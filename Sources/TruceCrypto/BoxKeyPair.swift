internal import CSodium

/// An X25519 key pair for sealed boxes (`crypto_box_seal`): anyone seals a message to the public key, only the
/// holder of the secret key opens it. An encrypted hub's keys reach each device this way.
package struct BoxKeyPair: Sendable {
    package static let publicKeyCount = Int(crypto_box_publickeybytes())
    package static let seedCount = Int(crypto_box_seedbytes())
    /// What sealing adds to a message: an ephemeral public key and a MAC.
    package static let sealOverhead = Int(crypto_box_sealbytes())

    package let publicKey: [UInt8]
    package let secretKey: SecretBytes

    /// A new random key pair.
    package init() {
        Sodium.ready()
        var publicKey = [UInt8](repeating: 0, count: Self.publicKeyCount)
        secretKey = SecretBytes(count: Int(crypto_box_secretkeybytes())) { secret in
            _ = crypto_box_keypair(&publicKey, secret)
        }
        self.publicKey = publicKey
    }

    /// The key pair a 32-byte seed gives, the same every time.
    package init(seed: SecretBytes) {
        precondition(seed.count == Self.seedCount, "an X25519 seed has \(Self.seedCount) bytes")
        Sodium.ready()
        var publicKey = [UInt8](repeating: 0, count: Self.publicKeyCount)
        secretKey = SecretBytes(count: Int(crypto_box_secretkeybytes())) { secret in
            seed.withBytes { _ = crypto_box_seed_keypair(&publicKey, secret, $0) }
        }
        self.publicKey = publicKey
    }

    /// A key pair read back from its secret key.
    package init?(secretKey: SecretBytes) {
        guard secretKey.count == Int(crypto_box_secretkeybytes()) else { return nil }
        Sodium.ready()
        var publicKey = [UInt8](repeating: 0, count: Self.publicKeyCount)
        let status = secretKey.withBytes { crypto_scalarmult_base(&publicKey, $0) }
        guard status == 0 else { return nil }
        (self.publicKey, self.secretKey) = (publicKey, secretKey)
    }

    /// `message` sealed to `publicKey`: only its key pair opens it, and the sender stays anonymous (sign it to say who).
    package static func seal(_ message: [UInt8], to publicKey: [UInt8]) -> [UInt8] {
        Sodium.ready()
        precondition(publicKey.count == publicKeyCount, "an X25519 public key has \(publicKeyCount) bytes")
        var sealed = [UInt8](repeating: 0, count: message.count + sealOverhead)
        _ = crypto_box_seal(&sealed, message, UInt64(message.count), publicKey)
        return sealed
    }

    /// Opens what `seal` sealed to this key pair, into guarded memory.
    package func open(_ sealed: [UInt8]) throws(CryptoError) -> SecretBytes {
        guard sealed.count >= Self.sealOverhead else { throw .cannotOpen }
        var status: Int32 = 0
        let opened = SecretBytes(count: sealed.count - Self.sealOverhead) { out in
            status = secretKey.withBytes { crypto_box_seal_open(out, sealed, UInt64(sealed.count), publicKey, $0) }
        }
        guard status == 0 else { throw .cannotOpen }
        return opened
    }
}
