internal import CSodium

/// A 256-bit key for XChaCha20-Poly1305 (`crypto_aead_xchacha20poly1305_ietf`): authenticated encryption with a
/// random 192-bit nonce per message, so nonces never repeat however many messages one key seals.
package struct SymmetricKey: Sendable {
    package static let count = Int(crypto_aead_xchacha20poly1305_ietf_keybytes())
    package static let nonceCount = Int(crypto_aead_xchacha20poly1305_ietf_npubbytes())
    /// What sealing adds: the nonce in front, the MAC behind.
    package static let overhead = nonceCount + Int(crypto_aead_xchacha20poly1305_ietf_abytes())

    package let bytes: SecretBytes

    /// A new random key.
    package init() { bytes = SecretBytes(random: Self.count) }

    package init?(_ bytes: SecretBytes) {
        guard bytes.count == Self.count else { return nil }
        self.bytes = bytes
    }

    /// `plaintext` encrypted and authenticated with `additional`, which is not encrypted but must be given again to open:
    /// the nonce, the ciphertext and its MAC, in that order.
    package func seal(_ plaintext: [UInt8], additional: [UInt8] = []) -> [UInt8] {
        var sealed = Sodium.randomBytes(Self.nonceCount) + [UInt8](repeating: 0, count: plaintext.count + Self.overhead - Self.nonceCount)
        var written: UInt64 = 0
        bytes.withBytes { key in
            sealed.withUnsafeMutableBufferPointer { out in
                _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                    out.baseAddress! + Self.nonceCount, &written, plaintext, UInt64(plaintext.count), additional,
                    UInt64(additional.count), nil, out.baseAddress!, key)
            }
        }
        return sealed
    }

    /// The plaintext of what `seal` sealed with this key and `additional`; fails when a byte of either changed.
    package func open(_ sealed: [UInt8], additional: [UInt8] = []) throws(CryptoError) -> [UInt8] {
        guard sealed.count >= Self.overhead else { throw .cannotOpen }
        var plaintext = [UInt8](repeating: 0, count: sealed.count - Self.overhead)
        var written: UInt64 = 0
        let status = bytes.withBytes { key in
            sealed.withUnsafeBufferPointer { input in
                crypto_aead_xchacha20poly1305_ietf_decrypt(
                    &plaintext, &written, nil, input.baseAddress! + Self.nonceCount, UInt64(sealed.count - Self.nonceCount),
                    additional, UInt64(additional.count), input.baseAddress!, key)
            }
        }
        guard status == 0 else { throw .cannotOpen }
        return plaintext
    }

    /// A subkey for one purpose, the same for the same key, `purpose` (8 ASCII bytes) and `index` (`crypto_kdf`).
    package func subkey(_ index: UInt64, purpose: String) -> SecretBytes {
        let context = Array(purpose.utf8)
        precondition(context.count == Int(crypto_kdf_contextbytes()), "a key derivation context has 8 bytes")
        return SecretBytes(count: Self.count) { out in
            let context = context.map { CChar(bitPattern: $0) }
            bytes.withBytes { _ = crypto_kdf_derive_from_key(out, Self.count, index, context, $0) }
        }
    }
}
