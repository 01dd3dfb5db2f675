import Foundation

/// The host keys an OpenSSH `known_hosts` file lists (sshd(8), "SSH_KNOWN_HOSTS FILE FORMAT"), read to check the key
/// an ssh server showed.
///
/// libgit2 checks host keys against the `known_hosts` of the process's
/// `$HOME` only; a transfer checks them here, against the file its caller
/// names, and tells libgit2 the verdict. Read as OpenSSH reads it: a host
/// on port 22 is its name, on another port `[name]:port`; a line's patterns
/// are comma-separated, with `*` and `?` wildcards and `!` negations, or one
/// hashed name (`|1|salt|hash`, HMAC-SHA1); `@revoked` lines refuse a key,
/// `@cert-authority` lines (host certificates) are not used.
package struct KnownHosts {
    /// What the file says of a host's key.
    package enum Verdict: Equatable, Sendable {
        /// A line for the host lists this key.
        case known
        /// No line is for the host.
        case unknown
        /// Lines are for the host, none with this key: the key changed, or someone is in between.
        case changed
        /// A `@revoked` line lists this key.
        case revoked
    }

    private struct Line {
        let marker: Substring?
        let hosts: Substring
        let key: [UInt8]?
    }

    private let lines: [Line]

    /// The lines of `contents` (a file's text); lines that are not a host and a key are skipped, as OpenSSH skips them.
    package init(_ contents: String) {
        lines = contents.split(whereSeparator: \.isNewline).compactMap { raw in
            var fields = raw.split(whereSeparator: { $0 == " " || $0 == "\t" })[...]
            guard let first = fields.first, !first.hasPrefix("#") else { return nil }
            let marker = first.hasPrefix("@") ? fields.popFirst() : nil
            guard fields.count >= 3 else { return nil }
            let hosts = fields[fields.startIndex], encoded = fields[fields.startIndex + 2]
            return Line(marker: marker, hosts: hosts, key: Data(base64Encoded: String(encoded)).map(Array.init))
        }
    }

    /// What the file says of `key` (the server's public key blob, in ssh's wire form) for `host` on `port`.
    package func verdict(for key: [UInt8], host: String, port: Int) -> Verdict {
        let name = port == 22 ? host.lowercased() : "[\(host.lowercased())]:\(port)"
        let lines = self.lines.filter { Self.matches($0.hosts, name) }
        // A revoked key is refused wherever its line is, even after one that lists it.
        if lines.contains(where: { $0.marker == "@revoked" && $0.key == key }) { return .revoked }
        let plain = lines.filter { $0.marker == nil }
        if plain.contains(where: { $0.key == key }) { return .known }
        return plain.isEmpty ? .unknown : .changed
    }

    /// Whether a line's host field names `name`.
    static func matches(_ field: Substring, _ name: String) -> Bool {
        if field.hasPrefix("|1|") {
            let parts = field.split(separator: "|", omittingEmptySubsequences: false)
            guard parts.count == 4, let salt = Data(base64Encoded: String(parts[2])), let hash = Data(base64Encoded: String(parts[3])) else {
                return false
            }
            return hmacSHA1(key: Array(salt), message: Array(name.utf8)) == Array(hash)
        }
        var matched = false
        for pattern in field.split(separator: ",") {
            let negated = pattern.hasPrefix("!")
            guard wildcard(Array(pattern.dropFirst(negated ? 1 : 0).lowercased().utf8)[...], Array(name.utf8)[...]) else { continue }
            if negated { return false }
            matched = true
        }
        return matched
    }

    /// OpenSSH's `match_pattern`: `*` any run of characters, `?` any one.
    static func wildcard(_ pattern: ArraySlice<UInt8>, _ text: ArraySlice<UInt8>) -> Bool {
        guard let first = pattern.first else { return text.isEmpty }
        switch first {
        case UInt8(ascii: "*"):
            return text.indices.contains { wildcard(pattern.dropFirst(), text[$0...]) } || wildcard(pattern.dropFirst(), text[text.endIndex...])
        case UInt8(ascii: "?"):
            return !text.isEmpty && wildcard(pattern.dropFirst(), text.dropFirst())
        default:
            return text.first == first && wildcard(pattern.dropFirst(), text.dropFirst())
        }
    }

    /// HMAC-SHA1 (RFC 2104), as hashed known_hosts names are written.
    static func hmacSHA1(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var block = key.count > 64 ? SHA1.hash(key) : key
        block += [UInt8](repeating: 0, count: 64 - block.count)
        var inner = SHA1()
        inner.update(block.map { $0 ^ 0x36 })
        inner.update(message)
        var outer = SHA1()
        outer.update(block.map { $0 ^ 0x5C })
        outer.update(inner.finalize())
        return outer.finalize()
    }
}
