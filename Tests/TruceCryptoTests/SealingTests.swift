import Testing

@testable import TruceCrypto

/// libsodium's primitives as TruceCrypto wraps them: what one side seals or signs, only the right key opens or checks,
/// and a changed byte anywhere is refused.
@Suite struct SealingTests {
    @Test func authenticatedEncryptionOpensOnlyWithTheSameKeyAndAdditionalData() throws {
        let key = SymmetricKey()
        let plaintext = Array("the document's content".utf8)
        let sealed = key.seal(plaintext, additional: Array("header".utf8))
        #expect(sealed.count == plaintext.count + SymmetricKey.overhead)
        #expect(try key.open(sealed, additional: Array("header".utf8)) == plaintext)
        // Nothing of the plaintext shows in what is sealed.
        #expect(!sealed.indices.contains { index in sealed[index...].starts(with: plaintext.prefix(8)) })
        #expect(throws: CryptoError.cannotOpen) { try SymmetricKey().open(sealed, additional: Array("header".utf8)) }
        #expect(throws: CryptoError.cannotOpen) { try key.open(sealed, additional: Array("headers".utf8)) }
        for index in [0, SymmetricKey.nonceCount, sealed.count - 1] {
            var altered = sealed
            altered[index] ^= 1
            #expect(throws: CryptoError.cannotOpen) { try key.open(altered, additional: Array("header".utf8)) }
        }
        // Two seals of the same bytes differ: each has a nonce of its own.
        #expect(key.seal(plaintext) != key.seal(plaintext))
    }

    @Test func signaturesCheckOnlyTheBytesAndKeyTheyWereMadeFor() {
        let device = SigningKeyPair(), other = SigningKeyPair()
        let message = Array("entry 7 of replica a".utf8)
        let signature = device.sign(message)
        #expect(SigningKeyPair.isValid(signature, of: message, by: device.publicKey))
        #expect(!SigningKeyPair.isValid(signature, of: message, by: other.publicKey))
        #expect(!SigningKeyPair.isValid(signature, of: message + [0], by: device.publicKey))
        var altered = signature
        altered[5] ^= 0x40
        #expect(!SigningKeyPair.isValid(altered, of: message, by: device.publicKey))
        #expect(!SigningKeyPair.isValid(Array(signature.prefix(10)), of: message, by: device.publicKey))
        let restored = SigningKeyPair(secretKey: SecretBytes(copying: device.secretKey.exposed))
        #expect(restored?.publicKey == device.publicKey)
    }

    @Test func sealedBoxesOpenOnlyForTheirRecipient() throws {
        let recipient = BoxKeyPair(), other = BoxKeyPair()
        let epochKey = SymmetricKey()
        let sealed = BoxKeyPair.seal(epochKey.bytes.exposed, to: recipient.publicKey)
        #expect(try recipient.open(sealed).isEqual(to: epochKey.bytes))
        #expect(throws: CryptoError.cannotOpen) { try other.open(sealed) }
        #expect(throws: CryptoError.cannotOpen) { try recipient.open(Array(sealed.dropLast())) }
        #expect(BoxKeyPair(secretKey: SecretBytes(copying: recipient.secretKey.exposed))?.publicKey == recipient.publicKey)
    }

    @Test func seedsGiveTheSameKeysEveryTimeAndDifferentSeedsDifferentOnes() {
        let seed = SecretBytes(random: 32)
        #expect(SigningKeyPair(seed: seed).publicKey == SigningKeyPair(seed: seed).publicKey)
        #expect(BoxKeyPair(seed: seed).publicKey == BoxKeyPair(seed: seed).publicKey)
        #expect(SigningKeyPair(seed: seed).publicKey != SigningKeyPair(seed: SecretBytes(random: 32)).publicKey)
    }

    @Test func subkeysDependOnKeyPurposeAndIndex() {
        let key = SymmetricKey()
        #expect(key.subkey(1, purpose: "hubslots").isEqual(to: key.subkey(1, purpose: "hubslots")))
        #expect(!key.subkey(1, purpose: "hubslots").isEqual(to: key.subkey(2, purpose: "hubslots")))
        #expect(!key.subkey(1, purpose: "hubslots").isEqual(to: key.subkey(1, purpose: "otherone")))
        #expect(!key.subkey(1, purpose: "hubslots").isEqual(to: SymmetricKey().subkey(1, purpose: "hubslots")))
    }

    @Test func paddingRoundTripsAndHidesTheSizeWithinItsBucket() throws {
        for count in [0, 1, 4095, 4096, 10_000, 70_000] {
            let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0) }
            let block = Padding.bucket(for: count)
            let padded = Padding.pad(bytes, toMultipleOf: block)
            #expect(padded.count % block == 0 && padded.count > count)
            #expect(try Padding.unpad(padded, blockSize: block) == bytes)
        }
        // Sizes in one bucket pad alike.
        #expect(Padding.pad([UInt8](repeating: 1, count: 100), toMultipleOf: 4096).count == Padding.pad([1], toMultipleOf: 4096).count)
        #expect(Padding.bucket(for: 1 << 20) == 1 << 17)
        #expect(throws: CryptoError.self) { try Padding.unpad([UInt8](repeating: 0, count: 4096), blockSize: 4096) }
    }

    @Test func passphrasesDeriveTheSameKeyOnlyWithTheSameSalt() throws {
        let salt = Sodium.randomBytes(PassphraseKey.saltCount)
        // The smallest limits libsodium allows: the test checks the derivation, not its cost.
        let small = (operations: UInt64(1), memory: 8192)
        let key = try PassphraseKey.derive(Array("correct horse".utf8), salt: salt, operations: small.operations, memory: small.memory)
        let again = try PassphraseKey.derive(Array("correct horse".utf8), salt: salt, operations: small.operations, memory: small.memory)
        let wrong = try PassphraseKey.derive(Array("correct horsf".utf8), salt: salt, operations: small.operations, memory: small.memory)
        let otherSalt = try PassphraseKey.derive(
            Array("correct horse".utf8), salt: Sodium.randomBytes(PassphraseKey.saltCount), operations: small.operations, memory: small.memory)
        #expect(key.bytes.isEqual(to: again.bytes))
        #expect(!key.bytes.isEqual(to: wrong.bytes) && !key.bytes.isEqual(to: otherSalt.bytes))
        #expect(throws: CryptoError.self) { try PassphraseKey.derive([], salt: [1, 2]) }
    }

    @Test func keyedDigestsNeedTheKey() {
        let key = SecretBytes(random: 32)
        let bytes = Array("0123456789abcdef0123456789abcdef".utf8)
        #expect(Digest.blake2b(bytes, key: key) == Digest.blake2b(bytes, key: key))
        #expect(Digest.blake2b(bytes, key: key) != Digest.blake2b(bytes))
        #expect(Digest.blake2b(bytes, key: key) != Digest.blake2b(bytes, key: SecretBytes(random: 32)))
    }
}
