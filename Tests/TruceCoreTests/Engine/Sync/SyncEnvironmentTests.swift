import Foundation
import TestSupport
import Testing

@testable import TruceCore

/// A sync over ssh and https through the library uses what its `SyncEnvironment` carries and nothing of the process
/// (its `$HOME`, `$SSH_AUTH_SOCK`, `$GIT_SSL_CAINFO` are the test runner's, which hold nothing these servers take),
/// against OpenSSH's sshd and lighttpd running `git http-backend` on 127.0.0.1.
@Suite(.timeLimit(.minutes(10)), .serialized) struct SyncEnvironmentTests {
    /// A store holding one document, and the store it failed to sync, byte for byte as it was.
    private func expectFailure(
        syncing url: String, with environment: SyncEnvironment, saying expected: [String], sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let store = try TestStore(syncEnvironment: environment)
        try store.store.save(.text("one\n"), to: "a.md", device: "laptop")
        let before = snapshot(ofStore: store.path)
        do {
            let report = try await store.store.sync(with: url)
            Issue.record("the sync went through: \(report)", sourceLocation: sourceLocation)
        } catch {
            let message = error.errorDescription ?? "\(error)"
            #expect(error.isBadInput, "\(message)", sourceLocation: sourceLocation)
            #expect(!message.contains("\n"), "one line: \(message)", sourceLocation: sourceLocation)
            for words in expected { #expect(message.contains(words), "\(message)", sourceLocation: sourceLocation) }
        }
        #expect(snapshot(ofStore: store.path) == before, "the store changed", sourceLocation: sourceLocation)
    }

    /// A version saved on one store reaches another through `url`, each syncing with `environment`.
    private func expectConvergence(through url: String, with environment: SyncEnvironment, sourceLocation: SourceLocation = #_sourceLocation)
        async throws
    {
        let laptop = try TestStore(syncEnvironment: environment), phone = try TestStore()
        try laptop.store.save(.text("one\n"), to: "a.md", device: "laptop")
        #expect(try await laptop.store.sync(with: url).sent == 1, sourceLocation: sourceLocation)
        // Given to the call rather than at open: the same value, the same sync.
        #expect(try await phone.store.sync(with: url, environment: environment).received.count == 1, sourceLocation: sourceLocation)
        #expect(try phone.store.contents(of: "a.md") == .text("one\n"), sourceLocation: sourceLocation)
    }

    // MARK: ssh

    @Test func aHomeDirectoryHoldingAKeyAndKnownHostsIsWhatAnSSHSyncUses() async throws {
        let ssh = try SSHGitServer()
        try ssh.trustHost()
        try await expectConvergence(through: ssh.makeHub(), with: SyncEnvironment(homeDirectory: ssh.home))
    }

    @Test func theAgentTheValueNamesSignsWhenNoKeyFileIsThere() async throws {
        let ssh = try SSHGitServer()
        try ssh.trustHost()
        let agent = try SSHAgent(adding: ssh.clientKey)
        defer { agent.agent.stop() }
        for file in [ssh.clientKey, ssh.clientKey + ".pub"] { try FileManager.default.removeItem(atPath: file) }
        try await expectConvergence(
            through: ssh.makeHub(), with: SyncEnvironment(knownHostsFile: ssh.home + "/.ssh/known_hosts", sshAgentSocket: agent.socket))
    }

    @Test func theEmptyEnvironmentKnowsNoHostAndSaysWhatToGive() async throws {
        let ssh = try SSHGitServer()
        try ssh.trustHost()
        try await expectFailure(
            syncing: ssh.makeHub(), with: .empty,
            saying: ["cannot be checked: no known_hosts file was given", "SyncEnvironment", "knownHostsFile", "ssh-keyscan -p \(ssh.port) 127.0.0.1"])
    }

    @Test func knownHostsWithoutAKeyFailsAuthenticationSayingWhatToGive() async throws {
        let ssh = try SSHGitServer()
        try ssh.trustHost()
        try await expectFailure(
            syncing: ssh.makeHub(), with: SyncEnvironment(knownHostsFile: ssh.home + "/.ssh/known_hosts"),
            saying: [
                "authentication failed for ssh://", "no ssh key given: give the sync a SyncEnvironment whose homeDirectory holds", "sshAgentSocket",
            ])
    }

    @Test func aHostWhoseKeyIsNotTheOneListedIsRefused() async throws {
        let ssh = try SSHGitServer()
        let other = TemporaryDirectory("truce-other-key")
        _ = try runTool("/usr/bin/ssh-keygen", package: "openssh-client", ["-q", "-t", "ed25519", "-N", "", "-f", other.file("key")])
        let fields = try String(contentsOfFile: other.file("key.pub"), encoding: .utf8).split(separator: " ")
        let knownHosts = ssh.home + "/.ssh/known_hosts"
        try "[127.0.0.1]:\(ssh.port) \(fields[0]) \(fields[1])\n".write(toFile: knownHosts, atomically: true, encoding: .utf8)
        try await expectFailure(
            syncing: ssh.makeHub(), with: SyncEnvironment(homeDirectory: ssh.home),
            saying: ["the ssh host key of 127.0.0.1:\(ssh.port) is not the one \(knownHosts) lists for it"])
    }

    // MARK: http(s)

    @Test func anHTTPPasswordIsTheValuesOrTheURLs() async throws {
        let web = try HTTPGitServer(tls: false)
        let url = try web.makeHub()
        try await expectFailure(
            syncing: url, with: .empty,
            saying: ["authentication failed for \(url)", "no password given", "httpPassword", "credentialHelperEnvironment"])
        try await expectConvergence(through: url, with: SyncEnvironment(httpUser: HTTPGitServer.user, httpPassword: HTTPGitServer.password))
    }

    @Test func theCAFileIsTrustedForItsSyncOnlyAndTheSystemBundleAgainAfter() async throws {
        let web = try HTTPGitServer(tls: true)
        for hub in ["first.git", "second.git"] { _ = try web.makeHub(hub) }
        let trusting = SyncEnvironment(certificateAuthorityFile: try #require(web.caFile))
        try await expectConvergence(through: web.url(of: "first.git", password: HTTPGitServer.password), with: trusting)
        // The next sync names no CA file: the system's bundle, which does not know the test CA, is back.
        try await expectFailure(
            syncing: web.url(of: "first.git", password: HTTPGitServer.password), with: .empty,
            saying: ["is not trusted", "to trust your own CA, give its PEM file as the sync environment's certificateAuthorityFile"])
        try await expectConvergence(through: web.url(of: "second.git", password: HTTPGitServer.password), with: trusting)
    }
}
