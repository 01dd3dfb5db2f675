/// Why a piece of sealed data could not be read: nothing of it is used.
package enum CryptoError: Error, Equatable, Sendable {
    /// Authenticated encryption failed: the bytes were altered, or sealed with another key.
    case cannotOpen
    /// A signature does not match the bytes and the key it claims.
    case badSignature
    /// The bytes are shorter than their format, or their padding is not what padding writes.
    case malformed(String)
    /// A key derivation ran out of memory (the passphrase's Argon2id needs tens of MB).
    case derivationFailed
}
