import Foundation
import TestSupport
import Testing

@testable import TruceGit

/// A host key checked against a `known_hosts` file as OpenSSH checks it: which lines are for a host is what
/// `ssh-keygen -F` finds in the same file (plain, hashed with `ssh-keygen -H`, `[host]:port`, wildcards, negations).
@Suite(.timeLimit(.minutes(10))) struct KnownHostsTests {
    let directory = TemporaryDirectory("truce-known-hosts")

    /// A fresh ed25519 public key: its type, its base64 blob, and the blob's bytes.
    func makeKey(_ name: String) throws -> (type: String, base64: String, blob: [UInt8]) {
        _ = try runTool("/usr/bin/ssh-keygen", package: "openssh-client", ["-q", "-t", "ed25519", "-N", "", "-f", directory.file(name)])
        let fields = try String(contentsOfFile: directory.file(name + ".pub"), encoding: .utf8).split(separator: " ")
        return (String(fields[0]), String(fields[1]), Array(try #require(Data(base64Encoded: String(fields[1])))))
    }

    /// Whether `ssh-keygen -F name` finds a line for `name` in `file`.
    func sshKeygenFinds(_ name: String, in file: String) throws -> Bool {
        try runToolStatus("/usr/bin/ssh-keygen", ["-F", name, "-f", file]) == 0
    }

    private func runToolStatus(_ executable: String, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    @Test func theLinesForAHostAreTheOnesSSHKeygenFinds() throws {
        let key = try makeKey("key")
        let line = { (hosts: String) in "\(hosts) \(key.type) \(key.base64)\n" }
        let plain =
            line("example.com,10.0.0.1") + line("[example.com]:2222") + line("*.wild.test,!bad.wild.test") + line("h?st.test")
            + "# comment.test \(key.type) \(key.base64)\n" + line("UPPER.test")
        let file = directory.file("known_hosts")
        try plain.write(toFile: file, atomically: true, encoding: .utf8)
        // The same lines with every name hashed, as `ssh-keygen -H` writes them.
        let hashed = directory.file("known_hosts_hashed")
        try (line("hashed.test") + line("[hashed.test]:2200")).write(toFile: hashed, atomically: true, encoding: .utf8)
        _ = try runTool("/usr/bin/ssh-keygen", package: "openssh-client", ["-q", "-H", "-f", hashed])
        let hashedText = try String(contentsOfFile: hashed, encoding: .utf8)
        #expect(hashedText.hasPrefix("|1|"), "ssh-keygen -H hashed the names: \(hashedText)")

        let names: [(host: String, port: Int)] = [
            ("example.com", 22), ("10.0.0.1", 22), ("example.com", 2222), ("example.com", 2200), ("other.com", 22), ("a.wild.test", 22),
            ("bad.wild.test", 22), ("wild.test", 22), ("host.test", 22), ("hoost.test", 22), ("comment.test", 22), ("upper.test", 22),
            ("hashed.test", 22), ("hashed.test", 2200), ("hashed.test", 2201), ("unhashed.test", 22),
        ]
        for (path, text) in [(file, plain), (hashed, hashedText)] {
            let knownHosts = KnownHosts(text)
            for (host, port) in names {
                let name = port == 22 ? host : "[\(host)]:\(port)"
                let expected: KnownHosts.Verdict = try sshKeygenFinds(name, in: path) ? .known : .unknown
                #expect(knownHosts.verdict(for: key.blob, host: host, port: port) == expected, "\(name) in \(path)")
            }
        }
    }

    @Test func anotherKeyForAListedHostIsAChangeAndARevokedKeyIsRefused() throws {
        let listed = try makeKey("listed"), other = try makeKey("other")
        let text = """
            server.test \(listed.type) \(listed.base64)
            revoked.test \(listed.type) \(listed.base64)
            @revoked revoked.test \(listed.type) \(listed.base64)
            @cert-authority certified.test \(listed.type) \(listed.base64)
            broken.test \(listed.type)
            """
        let knownHosts = KnownHosts(text)
        #expect(knownHosts.verdict(for: listed.blob, host: "server.test", port: 22) == .known)
        #expect(knownHosts.verdict(for: other.blob, host: "server.test", port: 22) == .changed)
        #expect(knownHosts.verdict(for: listed.blob, host: "revoked.test", port: 22) == .revoked)
        // A CA's key is not a host's key, and a line without a key lists nothing.
        #expect(knownHosts.verdict(for: listed.blob, host: "certified.test", port: 22) == .unknown)
        #expect(knownHosts.verdict(for: listed.blob, host: "broken.test", port: 22) == .unknown)
    }

    @Test func hmacSHA1IsRFC2202s() {
        // RFC 2202, test cases 1 and 2.
        let one = KnownHosts.hmacSHA1(key: [UInt8](repeating: 0x0B, count: 20), message: Array("Hi There".utf8))
        #expect(one.map { String(format: "%02x", $0) }.joined() == "b617318655057264e28bc0b6fb378c8ef146be00")
        let two = KnownHosts.hmacSHA1(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
        #expect(two.map { String(format: "%02x", $0) }.joined() == "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79")
    }
}
