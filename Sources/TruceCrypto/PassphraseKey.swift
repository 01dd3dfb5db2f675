internal import CSodium

/// A key from a passphrase through Argon2id (`crypto_pwhash`), memory-hard so that guessing costs memory per guess.
package enum PassphraseKey {
    package static let saltCount = Int(crypto_pwhash_saltbytes())
    /// libsodium's "interactive" limits: 2 passes over 64 MiB, a fraction of a second here.
    package static let operations = UInt64(crypto_pwhash_opslimit_interactive())
    package static let memory = Int(crypto_pwhash_memlimit_interactive())

    /// The key `passphrase` and `salt` give with `operations` and `memory` (stored beside what it seals, to read it back).
    package static func derive(
        _ passphrase: [UInt8], salt: [UInt8], operations: UInt64 = operations, memory: Int = memory
    ) throws(CryptoError) -> SymmetricKey {
        Sodium.ready()
        guard salt.count == saltCount else { throw .malformed("a passphrase salt has \(saltCount) bytes") }
        var status: Int32 = 0
        let bytes = SecretBytes(count: SymmetricKey.count) { out in
            let phrase = passphrase.map { CChar(bitPattern: $0) }
            status = crypto_pwhash(
                out, UInt64(SymmetricKey.count), phrase, UInt64(phrase.count), salt,
                operations, memory, crypto_pwhash_ALG_ARGON2ID13)
        }
        guard status == 0, let key = SymmetricKey(bytes) else { throw .derivationFailed }
        return key
    }
}
