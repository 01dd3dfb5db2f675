import Foundation
import TestSupport
import Testing

/// `truce hub` and `truce sync` with an encrypted hub on real git servers on 127.0.0.1 (git daemon, lighttpd + git
/// http-backend, OpenSSH), stopped by pid: three devices converge, and the hub's objects, every one inflated, hold
/// none of what they wrote.
@Suite(.timeLimit(.minutes(20)), .serialized) struct EncryptedHubCommandTests {
    let home = TemporaryDirectory("truce-home")

    func environment(_ extra: [String: String] = [:]) -> [String: String] {
        ["HOME": home.path, "GIT_CONFIG_NOSYSTEM": "1", "SSH_AUTH_SOCK": "", "TRUCE_USERNAME": "", "TRUCE_PASSWORD": ""].merging(extra) { $1 }
    }

    static let secrets = (key: "medical/blood-results.md", content: "glucose 5.4 mmol/L\n", devices: ["alice-laptop", "alice-phone", "bob-tablet"])
    static let date = "2026-11-30T20:15:00Z"

    func truceJSON(_ arguments: [String], store: CLIStore, environment env: [String: String]) throws -> [String: Any] {
        let result = try truce(arguments + ["--json"], store: store.path, environment: env)
        try #require(result.status == 0, "\(arguments): \(result.errorOutput)")
        return try #require(JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
    }

    /// Three stores through the encrypted hub at `url` (kept in `hubDirectory`): founded, joined, approved, edited and
    /// synced until they agree; then the hub is searched.
    func expectEncryptedConvergence(through url: String, hubDirectory: String, environment env: [String: String]) throws {
        let stores = try (0..<3).map { _ in try CLIStore() }
        let founding = try truceJSON(["hub", "encrypt", url], store: stores[0], environment: env)
        for store in stores.dropFirst() {
            let asking = try truceJSON(["hub", "join", url], store: store, environment: env)
            #expect(asking["store"] as? String == founding["store"] as? String)
            let device = try #require(asking["thisDevice"] as? String)
            #expect(try truce(["hub", "approve", device, url], store: stores[0].path, environment: env).status == 0)
        }
        let saved = try truce(
            ["save", Self.secrets.key, "-", "--device", Self.secrets.devices[0], "--date", Self.date], store: stores[0].path,
            input: .text(Self.secrets.content), environment: env)
        #expect(saved.status == 0, "\(saved.errorOutput)")
        for (index, store) in stores.enumerated() {
            let synced = try truce(["sync", url], store: store.path, environment: env)
            #expect(synced.status == 0, "\(synced.errorOutput)")
            if index > 0 {
                let edit = try truce(
                    ["save", "notes/\(index).md", "-", "--device", Self.secrets.devices[index], "--date", Self.date], store: store.path,
                    input: .text("note \(index)\n"), environment: env)
                #expect(edit.status == 0)
                #expect(try truce(["sync", url], store: store.path, environment: env).status == 0)
            }
        }
        for store in stores { #expect(try truce(["sync", url], store: store.path, environment: env).status == 0) }
        let listings = try stores.map { store in
            try [Self.secrets.key, "notes/1.md", "notes/2.md"].map { try store.run("versions", $0).output }.joined()
        }
        #expect(Set(listings).count == 1 && listings[0].contains(Self.secrets.devices[2]), "\(listings)")
        #expect(try stores[2].run("cat", Self.secrets.key).output == Self.secrets.content)

        let ids = try git(["-C", hubDirectory, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)"]).stdout
        let everything = try git(["-C", hubDirectory, "cat-file", "--batch"], input: ids).stdout
        #expect(everything.count > 1000)
        let timestamp = String(Int(ISO8601DateFormatter().date(from: Self.date)!.timeIntervalSince1970))
        let found =
            ([Self.secrets.key, "blood", Self.secrets.content, "note 1", "notes/", timestamp, "2026-11-30", "Replica:"]
            + Self.secrets.devices).filter { everything.range(of: Data($0.utf8)) != nil }
        #expect(found.isEmpty, "the hub shows \(found)")
        #expect(everything.range(of: Data("\nPACK\0\0\0\u{2}".utf8)) == nil, "the hub holds a pack in the clear")
        #expect(try git(["-C", hubDirectory, "fsck", "--strict"]).status == 0)
        for store in stores { #expect(try git(["-C", store.path, "fsck", "--strict", "--no-dangling"]).output.isEmpty) }
    }

    @Test func throughGitDaemon() throws {
        let daemon = try GitDaemon()
        try expectEncryptedConvergence(through: daemon.makeHub(), hubDirectory: daemon.root + "/hub.git", environment: environment())
    }

    @Test func throughSmartHTTP() throws {
        let web = try HTTPGitServer(tls: false)
        try expectEncryptedConvergence(
            through: web.makeHub(), hubDirectory: web.root + "/hub.git",
            environment: environment(["TRUCE_USERNAME": HTTPGitServer.user, "TRUCE_PASSWORD": HTTPGitServer.password]))
    }

    @Test func throughSSH() throws {
        let ssh = try SSHGitServer()
        try ssh.trustHost()
        try expectEncryptedConvergence(through: ssh.makeHub(), hubDirectory: ssh.root + "/hub.git", environment: environment(["HOME": ssh.home]))
    }

    @Test func theRecoveryCodeIsReadFromStandardInputAndBadInputIsOneLine() throws {
        let bare = try BareRepository("truce-cli-hub"), hub = bare.path
        let founder = try CLIStore()
        let founding = try truceJSON(["hub", "encrypt", hub], store: founder, environment: environment())
        let code = try #require(founding["recoveryCode"] as? String)
        try founder.save("a.md", "kept\n")
        #expect(try founder.run("sync", hub).status == 0)

        let restored = try CLIStore()
        let wrong = try restored.run(["hub", "recover", hub], input: .text("0000-1111\n"))
        #expect(wrong.status != 0 && wrong.errorLines.count == 1, "\(wrong.errorOutput)")
        let recovered = try restored.run(["hub", "recover", hub], input: .text(code + "\n"))
        #expect(recovered.status == 0, "\(recovered.errorOutput)")
        let synced = try restored.run("sync", hub)
        #expect(synced.status == 0 && synced.output.contains("(encrypted hub)"), "\(synced.output)")
        #expect(try restored.run("cat", "a.md").output == "kept\n")

        let unknown = try founder.run("hub", "frobnicate", hub)
        #expect(unknown.status == 2 && unknown.errorLines.count == 1, "\(unknown.errorOutput)")
        let noDevice = try founder.run("hub", "approve", "0000-0000-0000-0000", hub)
        #expect(
            noDevice.status != 0
                && noDevice.errorLines == [
                    "truce: cannot sync with '\(hub)': no device 0000-0000-0000-0000 asks to join it ('truce hub devices' lists those that do)"
                ])
        let plain = try CLIStore()
        let refused = try plain.run("sync", hub)
        #expect(refused.status != 0 && refused.errorLines.count == 1 && refused.errorOutput.contains("encrypted hub"))
    }
}
