internal import CSodium

/// BLAKE2b (`crypto_generichash`): what chains sealed entries and names what they carry.
package enum Digest {
    package static let count = 32

    /// The 32-byte BLAKE2b digest of `bytes`, keyed by `key` when given (a MAC that only key holders can compute).
    package static func blake2b(_ bytes: [UInt8], key: SecretBytes? = nil) -> [UInt8] {
        Sodium.ready()
        var digest = [UInt8](repeating: 0, count: count)
        if let key {
            key.withBytes { _ = crypto_generichash(&digest, count, bytes, UInt64(bytes.count), $0, key.count) }
        } else {
            _ = crypto_generichash(&digest, count, bytes, UInt64(bytes.count), nil, 0)
        }
        return digest
    }
}
