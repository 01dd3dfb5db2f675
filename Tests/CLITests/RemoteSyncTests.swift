import Foundation
import TestSupport
import Testing

/// `sync` against real git servers on 127.0.0.1 (git daemon, lighttpd + git http-backend over http and https, OpenSSH),
/// each hub a plain bare repository, started by the test and stopped by pid.
@Suite(.timeLimit(.minutes(20)), .serialized) struct RemoteSyncTests {
    /// A HOME of the test's own, so the user's ~/.gitconfig, keys and credential helpers play no part.
    let home = TemporaryDirectory("truce-home")

    func environment(_ extra: [String: String] = [:]) -> [String: String] {
        ["HOME": home.path, "GIT_CONFIG_NOSYSTEM": "1", "SSH_AUTH_SOCK": "", "TRUCE_USERNAME": "", "TRUCE_PASSWORD": ""].merging(extra) { $1 }
    }

    /// A store with one document, synced to `url`; a second store synced from it; then a change on the second travels back.
    func expectConvergence(through url: String, environment env: [String: String], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let laptop = try CLIStore(), phone = try CLIStore()
        let first = try laptop.save("notes/a.md", "one\n")
        let pushed = try truce(["sync", url, "--json"], store: laptop.path, environment: env)
        try #require(pushed.status == 0, "laptop sync failed: \(pushed.errorOutput)", sourceLocation: sourceLocation)
        let report = try #require(JSONSerialization.jsonObject(with: pushed.stdout) as? [String: Any])
        #expect(report["sent"] as? Int == 1, "the hub lacked the one head", sourceLocation: sourceLocation)
        let traffic = try #require(report["traffic"] as? [String: Int])
        #expect((traffic["sentObjects"] ?? 0) >= 3, "a commit, a tree and a blob travel: \(traffic)", sourceLocation: sourceLocation)

        let pulled = try truce(["sync", url, "--json"], store: phone.path, environment: env)
        try #require(pulled.status == 0, "phone sync failed: \(pulled.errorOutput)", sourceLocation: sourceLocation)
        #expect(pulled.errorLines.isEmpty, "no progress line when stderr is not a terminal: \(pulled.errorOutput)", sourceLocation: sourceLocation)
        let pulledReport = try #require(JSONSerialization.jsonObject(with: pulled.stdout) as? [String: Any])
        #expect((pulledReport["received"] as? [Any])?.count == 1, sourceLocation: sourceLocation)
        #expect((pulledReport["traffic"] as? [String: Int])?["documentsAdopted"] == 1, sourceLocation: sourceLocation)
        #expect(try phone.run("cat", "notes/a.md").output == "one\n", sourceLocation: sourceLocation)

        let second = try phone.save("notes/a.md", "two\n")
        #expect(try truce(["sync", url], store: phone.path, environment: env).status == 0, sourceLocation: sourceLocation)
        let back = try truce(["sync", url], store: laptop.path, environment: env)
        #expect(back.status == 0, "\(back.errorOutput)", sourceLocation: sourceLocation)
        #expect(second != first, sourceLocation: sourceLocation)
        #expect(try laptop.run("versions", "notes/a.md").output == phone.run("versions", "notes/a.md").output, sourceLocation: sourceLocation)
        #expect(try laptop.run("versions", "notes/a.md").output.contains(second), sourceLocation: sourceLocation)
    }

    /// Runs a sync that must fail: one `truce:` line containing `expected`, exit code 2, the store byte for byte unchanged.
    func expectFailure(
        _ url: String, environment env: [String: String], saying expected: String, hiding secret: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let store = try CLIStore()
        try store.save("notes/a.md", "one\n")
        let before = snapshot(ofStore: store.path)
        let result = try truce(["sync", url], store: store.path, environment: env)
        #expect(result.status == 2, "exit \(result.status): \(result.errorOutput)", sourceLocation: sourceLocation)
        #expect(result.errorLines.count == 1, "stderr: \(result.errorOutput)", sourceLocation: sourceLocation)
        #expect(result.errorLines.first?.hasPrefix("truce: ") == true, "stderr: \(result.errorOutput)", sourceLocation: sourceLocation)
        #expect(result.errorLines.first?.contains(expected) == true, "stderr: \(result.errorOutput)", sourceLocation: sourceLocation)
        if let secret {
            for line in result.errorLines + result.output.split(separator: "\n").map(String.init) {
                #expect(!line.contains(secret), "password shown: \(line)", sourceLocation: sourceLocation)
            }
        }
        #expect(snapshot(ofStore: store.path) == before, "the store changed", sourceLocation: sourceLocation)
    }

    // MARK: git://

    @Test func gitDaemonHubPushAndFetchConverge() throws {
        let daemon = try GitDaemon()
        try expectConvergence(through: daemon.makeHub(), environment: environment())
        #expect(try git("-C", daemon.root + "/hub.git", "fsck", "--strict").status == 0)
    }

    @Test func syncOnATerminalShowsAProgressLine() throws {
        let daemon = try GitDaemon()
        let url = try daemon.makeHub()
        let laptop = try CLIStore(), phone = try CLIStore()
        try laptop.save("notes/a.md", "one\n")
        #expect(try truce(["sync", url], store: laptop.path, environment: environment()).status == 0)
        // script(1) gives the sync a terminal; its stderr then carries the progress line.
        let command = [truceExecutable, "--store", phone.path, "sync", url].map { "'\($0)'" }.joined(separator: " ")
        let result = try runTool("/usr/bin/script", package: "bsdutils", ["-qec", command, "/dev/null"], environment: environment())
        #expect(
            result.output.contains("truce: received 7 objects"),
            "the hub's index, the laptop's manifest and their empty tree, the version's commit, two trees and a blob: \(result.output.debugDescription)"
        )
        #expect(result.output.contains("1 document(s) adopted"), "terminal output: \(result.output.debugDescription)")
        #expect(try phone.run("cat", "notes/a.md").output == "one\n")
    }

    @Test func hubDownIsOneLine() throws {
        let port = try freeLoopbackPort()
        try expectFailure("git://127.0.0.1:\(port)/hub.git", environment: environment(), saying: "Connection refused")
    }

    @Test func hubThatIsNotAGitRepositoryIsOneLine() throws {
        let daemon = try GitDaemon()
        try FileManager.default.createDirectory(atPath: daemon.root + "/empty-dir", withIntermediateDirectories: true)
        try expectFailure(daemon.url(of: "empty-dir"), environment: environment(), saying: "cannot sync with")
    }

    // MARK: http(s)

    @Test func httpHubWithThePasswordInTheEnvironmentConverges() throws {
        let web = try HTTPGitServer(tls: false)
        try expectConvergence(
            through: web.makeHub(),
            environment: environment([
                "TRUCE_USERNAME": HTTPGitServer.user, "TRUCE_PASSWORD": HTTPGitServer.password,
            ]))
    }

    @Test func httpsHubWithThePasswordInTheURLAndATrustedTestCAConverges() throws {
        let web = try HTTPGitServer(tls: true)
        _ = try web.makeHub()
        try expectConvergence(
            through: web.url(of: "hub.git", password: HTTPGitServer.password),
            environment: environment(["GIT_SSL_CAINFO": try #require(web.caFile)]))
    }

    @Test func httpsPasswordFromAGitCredentialHelperIsUsedAndRejectedWhenWrong() throws {
        let web = try HTTPGitServer(tls: true)
        let url = try web.makeHub()
        let credentials = home.file("credentials")
        try "[credential]\n\thelper = store --file=\(credentials)\n".write(toFile: home.file(".gitconfig"), atomically: true, encoding: .utf8)
        try "https://\(HTTPGitServer.user):\(HTTPGitServer.password)@localhost%3a\(web.port)\n"
            .write(toFile: credentials, atomically: true, encoding: .utf8)
        let env = environment(["GIT_SSL_CAINFO": try #require(web.caFile)])
        try expectConvergence(through: url, environment: env)
        // A wrong stored password: the sync fails and git's helper forgets it, as git itself does.
        try "https://\(HTTPGitServer.user):wrong-pw@localhost%3a\(web.port)\n".write(toFile: credentials, atomically: true, encoding: .utf8)
        try expectFailure(url, environment: env, saying: "authentication failed for \(url)", hiding: "wrong-pw")
        #expect(try String(contentsOfFile: credentials, encoding: .utf8).contains("wrong-pw") == false, "the helper still holds the refused password")
    }

    @Test func wrongPasswordSaysAuthenticationFailedWithoutThePassword() throws {
        let web = try HTTPGitServer(tls: false)
        _ = try web.makeHub()
        try expectFailure(
            web.url(of: "hub.git", password: "not-the-secret"), environment: environment(),
            saying: "authentication failed for http://\(HTTPGitServer.user)@127.0.0.1:\(web.port)/git/hub.git",
            hiding: "not-the-secret")
    }

    @Test func everyErrorLineHidesThePasswordOfTheURL() throws {
        let port = try freeLoopbackPort()
        try expectFailure(
            "http://ada:hunter2-secret@127.0.0.1:\(port)/git/hub.git", environment: environment(),
            saying: "ada@127.0.0.1:\(port)", hiding: "hunter2-secret")
    }

    @Test func aRefusedHeadLineHidesThePasswordOfTheURL() throws {
        let web = try HTTPGitServer(tls: false)
        let url = try web.makeHub()
        let withPassword = web.url(of: "hub.git", password: HTTPGitServer.password)
        let laptop = try CLIStore(), phone = try CLIStore()
        try laptop.save("good.md", "good\n")
        #expect(try truce(["sync", withPassword], store: laptop.path, environment: environment()).status == 0)
        // A manifest ref whose chain is an ordinary commit: refused by name, with the URL in the line.
        let hub = web.root + "/hub.git"
        let tree = try git("-C", hub, "mktree").output.trimmingCharacters(in: .whitespacesAndNewlines)
        let forged = try git(["-C", hub, "commit-tree", tree], input: Data("not a manifest\n".utf8)).output.trimmingCharacters(
            in: .whitespacesAndNewlines)
        #expect(try git("-C", hub, "update-ref", "refs/truce/replicas/" + String(repeating: "ab", count: 16), forged).status == 0)
        let result = try truce(["sync", withPassword], store: phone.path, environment: environment())
        #expect(result.status == 3, "\(result.errorOutput)")
        #expect(result.errorLines.count == 1, "\(result.errorOutput)")
        #expect(
            result.errorLines.first?.hasPrefix(
                "truce: refused head \(forged) from \(url.replacingOccurrences(of: "://", with: "://\(HTTPGitServer.user)@")): ") == true,
            "\(result.errorOutput)")
        #expect(!result.errorOutput.contains(HTTPGitServer.password) && !result.output.contains(HTTPGitServer.password))
        #expect(try phone.run("cat", "good.md").output == "good\n")
    }

    @Test func untrustedCertificateIsOneLineNamingGitSSLCAInfo() throws {
        let web = try HTTPGitServer(tls: true)
        try expectFailure(
            web.makeHub(), environment: environment(["TRUCE_USERNAME": HTTPGitServer.user, "TRUCE_PASSWORD": HTTPGitServer.password]),
            saying: "GIT_SSL_CAINFO")
    }

    // MARK: ssh

    @Test func sshHubWithAKeyFileConverges() throws {
        let ssh = try SSHGitServer()
        try ssh.trustHost()
        try expectConvergence(through: ssh.makeHub(), environment: environment(["HOME": ssh.home]))
    }

    @Test func sshHubWithTheKeyOnlyInSSHAgentConverges() throws {
        let ssh = try SSHGitServer()
        try ssh.trustHost()
        let agent = try SSHAgent(adding: ssh.clientKey)
        defer { agent.agent.stop() }
        // With the key files gone, only the agent can authenticate.
        for file in [ssh.clientKey, ssh.clientKey + ".pub"] { try FileManager.default.removeItem(atPath: file) }
        try expectConvergence(through: ssh.makeHub(), environment: environment(["HOME": ssh.home]).merging(agent.environment) { $1 })
    }

    @Test func sshWithoutAnyKeySaysAuthenticationFailed() throws {
        let ssh = try SSHGitServer()
        try ssh.trustHost()
        for file in [ssh.clientKey, ssh.clientKey + ".pub"] { try FileManager.default.removeItem(atPath: file) }
        try expectFailure(ssh.makeHub(), environment: environment(["HOME": ssh.home]), saying: "authentication failed for ssh://")
    }

    @Test func unknownSSHHostKeyIsRefusedWithHowToTrustIt() throws {
        let ssh = try SSHGitServer()
        try expectFailure(
            ssh.makeHub(), environment: environment(["HOME": ssh.home]),
            saying: "ssh-keyscan -p \(ssh.port) 127.0.0.1 >> ~/.ssh/known_hosts")
    }
}
