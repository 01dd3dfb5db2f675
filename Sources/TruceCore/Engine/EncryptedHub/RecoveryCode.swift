import Foundation
internal import TruceCrypto

/// The printable code that restores an encrypted hub when every device is lost: 32 random bytes from which a key pair
/// follows, the same every time, that the hub's keys are sealed to like any device's.
struct RecoveryCode: Sendable {
    let secret: SecretBytes

    /// Crockford's base 32: no I, L, O or U to misread.
    private static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)

    static func random() -> RecoveryCode { RecoveryCode(secret: SecretBytes(random: 32)) }

    private var key: SymmetricKey { SymmetricKey(secret)! }
    var signing: SigningKeyPair { SigningKeyPair(seed: key.subkey(1, purpose: "recovery")) }
    var box: BoxKeyPair { BoxKeyPair(seed: key.subkey(2, purpose: "recovery")) }
    var member: HubMember { HubMember(signing: signing.publicKey, box: box.publicKey) }

    /// The code as people write it down: 52 base-32 digits in groups of four, then two check digits.
    var text: String {
        let bytes = secret.exposed
        var digits: [UInt8] = []
        var buffer = 0, bits = 0
        for byte in bytes {
            buffer = buffer << 8 | Int(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                digits.append(Self.alphabet[(buffer >> bits) & 31])
            }
        }
        if bits > 0 { digits.append(Self.alphabet[(buffer << (5 - bits)) & 31]) }
        let check = Digest.blake2b(bytes)
        digits += [Self.alphabet[Int(check[0]) & 31], Self.alphabet[Int(check[1]) & 31]]
        return stride(from: 0, to: digits.count, by: 4).map { String(decoding: digits[$0..<min($0 + 4, digits.count)], as: UTF8.self) }
            .joined(separator: "-")
    }

    /// The code `text` spells (dashes, spaces and case aside); nil when a digit is mistyped.
    init?(text: String) {
        let digits = text.uppercased().utf8.filter { $0 != UInt8(ascii: "-") && $0 != UInt8(ascii: " ") }
        guard digits.count == 54 else { return nil }
        var bytes: [UInt8] = [], buffer = 0, bits = 0
        for digit in digits.prefix(52) {
            guard let value = Self.alphabet.firstIndex(of: digit) else { return nil }
            buffer = (buffer << 5 | value) & 0xFFFF
            bits += 5
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8((buffer >> bits) & 0xFF))
            }
        }
        let check = Digest.blake2b(bytes)
        guard bytes.count == 32, Array(digits.suffix(2)) == [Self.alphabet[Int(check[0]) & 31], Self.alphabet[Int(check[1]) & 31]] else {
            return nil
        }
        secret = SecretBytes(copying: bytes)
    }

    private init(secret: SecretBytes) { self.secret = secret }
}
