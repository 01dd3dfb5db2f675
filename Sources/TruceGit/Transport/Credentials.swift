internal import CLibgit2
import Foundation

/// The credentials one transfer offers a server, each source once and in git's order, until the server takes one.
///
/// libgit2 asks again after every credential the server refused, so a source
/// is never offered twice and an exhausted list ends the transfer with
/// "authentication failed for URL" (password removed) instead of a loop.
/// Every source comes from the `TransferEnvironment` the caller handed down, never from the process.
package final class CredentialSupplier {
    private let url: String
    private let parsed: RemoteURL?
    private let environment: TransferEnvironment
    private var sshSources: [SSHSource]?
    private var passwordSources: [PasswordSource]?
    /// What was offered, for the failure message.
    private(set) var tried: [String] = []
    /// A credential from git's helper, offered and not yet confirmed by the server.
    private var helperCredential: GitCredentialHelper.Credential?
    /// The agent keys offered, kept alive while libssh2 may call back to sign with them.
    private var agentKeys: [AgentKey] = []

    package init(url: String, environment: TransferEnvironment) {
        self.url = url
        parsed = RemoteURL(url)
        self.environment = environment
    }

    /// Fills `out` with the next credential of a type in `allowed`, or returns GIT_EAUTH with libgit2's error set.
    func next(_ out: UnsafeMutablePointer<UnsafeMutablePointer<git_credential>?>, usernameFromURL: String?, allowed: UInt32) -> Int32 {
        // Asked again after a helper's credential: the server refused it, so the helper must forget it.
        if let refused = helperCredential {
            GitCredentialHelper.run("reject", refused, environment: environment.credentialHelperEnvironment)
            helperCredential = nil
        }
        if allowed & GIT_CREDENTIAL_USERNAME.rawValue != 0 {
            return git_credential_username_new(out, usernameFromURL ?? parsed?.user ?? environment.sshUser)
        }
        if allowed & GIT_CREDENTIAL_SSH_KEY.rawValue != 0 {
            let user = usernameFromURL ?? parsed?.user ?? environment.sshUser
            if sshSources == nil { sshSources = SSHSource.available(in: environment) }
            while let source = sshSources?.first {
                sshSources?.removeFirst()
                let label = source.label(in: environment)
                if tried.last != label { tried.append(label) }
                let code: Int32
                switch source {
                case .agent(let key):
                    // The agent signs through a custom credential: libssh2's own agent support finds it by SSH_AUTH_SOCK.
                    guard allowed & GIT_CREDENTIAL_SSH_CUSTOM.rawValue != 0 else { continue }
                    agentKeys.append(key)
                    code = key.identity.publicKey.withUnsafeBufferPointer { blob in
                        blob.withMemoryRebound(to: CChar.self) { blob in
                            git_credential_ssh_custom_new(
                                out, user, blob.baseAddress, blob.count, agentSignature, Unmanaged.passUnretained(key).toOpaque())
                        }
                    }
                case .keyFile(let privateKey, let publicKey): code = git_credential_ssh_key_new(out, user, publicKey, privateKey, nil)
                }
                if code == 0 { return 0 }
            }
        }
        if allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT.rawValue != 0 {
            if passwordSources == nil {
                passwordSources = PasswordSource.available(for: parsed, usernameFromURL: usernameFromURL, in: environment)
            }
            while let source = passwordSources?.first {
                passwordSources?.removeFirst()
                tried.append(source.label)
                let credential: GitCredentialHelper.Credential?
                switch source {
                case .given(let user, let password, _): credential = .init(user: user, password: password)
                case .helper(let childEnvironment):
                    credential = parsed.flatMap { GitCredentialHelper.fill(for: $0, user: usernameFromURL, environment: childEnvironment) }
                    helperCredential = credential
                }
                guard let credential else { continue }
                return git_credential_userpass_plaintext_new(out, credential.user, credential.password)
            }
        }
        let sources = tried.isEmpty ? nothingToOffer(ssh: allowed & GIT_CREDENTIAL_SSH_KEY.rawValue != 0) : "tried " + tried.joined(separator: ", ")
        git_error_set_str(Int32(GIT_ERROR_NET.rawValue), "authentication failed for \(RemoteURL.redactingPasswords(in: url)) (\(sources))")
        return GIT_EAUTH.rawValue
    }

    /// Why no credential was offered at all, and what to give: the process's variables name none (the command
    /// line's words, unchanged), a value the caller gave says which of its fields would.
    private func nothingToOffer(ssh: Bool) -> String {
        guard !environment.namesVariables else { return "no credentials found" }
        return ssh
            ? "no ssh key given: give the sync a SyncEnvironment whose homeDirectory holds .ssh/id_ed25519 (or id_ecdsa, id_rsa), "
                + "or whose sshAgentSocket is a running ssh-agent"
            : "no password given: put it in the URL, or give the sync a SyncEnvironment with httpPassword "
                + "or a credentialHelperEnvironment for git's credential helpers"
    }

    /// The transfer succeeded: a helper's credential is stored for next time, as git does.
    package func transferSucceeded() {
        if let accepted = helperCredential { GitCredentialHelper.run("approve", accepted, environment: environment.credentialHelperEnvironment) }
        helperCredential = nil
    }

    /// The transfer failed: a helper's credential the server refused is forgotten.
    package func transferFailed(_ error: GitError) {
        if let refused = helperCredential, error.code == GIT_EAUTH.rawValue {
            GitCredentialHelper.run("reject", refused, environment: environment.credentialHelperEnvironment)
        }
        helperCredential = nil
    }
}

/// One key of an ssh-agent, offered as a custom credential whose payload it is.
private final class AgentKey {
    let agent: SSHAgentClient
    let identity: SSHAgentClient.Identity

    init(agent: SSHAgentClient, identity: SSHAgentClient.Identity) {
        (self.agent, self.identity) = (agent, identity)
    }
}

/// libssh2's signing callback for an agent key: the agent's signature of `data`, in memory libssh2 frees (`malloc`).
private let agentSignature: git_credential_sign_cb = { _, signature, length, data, count, abstract in
    guard let signature, let length, let data, let payload = abstract?.pointee else { return -1 }
    let key = Unmanaged<AgentKey>.fromOpaque(payload).takeUnretainedValue()
    guard let bytes = key.agent.sign(Array(UnsafeBufferPointer(start: data, count: count)), with: key.identity), !bytes.isEmpty,
        let buffer = malloc(bytes.count)
    else { return -1 }
    bytes.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
    signature.pointee = buffer.assumingMemoryBound(to: UInt8.self)
    length.pointee = bytes.count
    return 0
}

/// Where an ssh key can come from, in the order OpenSSH tries them.
private enum SSHSource {
    case agent(AgentKey)
    case keyFile(privateKey: String, publicKey: String?)

    func label(in environment: TransferEnvironment) -> String {
        switch self {
        case .agent: "ssh-agent"
        case .keyFile(let privateKey, _): environment.shown(privateKey)
        }
    }

    /// The keys of the agent the environment names, then the home directory's `.ssh/id_ed25519`, `id_ecdsa`,
    /// `id_rsa` that exist and need no passphrase.
    static func available(in environment: TransferEnvironment) -> [SSHSource] {
        var sources: [SSHSource] = []
        // An agent that cannot be reached offers nothing, and the key files are tried.
        if let socket = environment.sshAgentSocket, !socket.isEmpty {
            let agent = SSHAgentClient(socket: socket)
            sources += (agent.identities() ?? []).map { .agent(AgentKey(agent: agent, identity: $0)) }
        }
        guard let home = environment.homeDirectory, !home.isEmpty else { return sources }
        let directory = home + "/.ssh/"
        for name in ["id_ed25519", "id_ecdsa", "id_rsa"] {
            let privateKey = directory + name
            guard let contents = FileManager.default.contents(atPath: privateKey), !isEncrypted(contents) else { continue }
            let publicKey = privateKey + ".pub"
            sources.append(.keyFile(privateKey: privateKey, publicKey: FileManager.default.fileExists(atPath: publicKey) ? publicKey : nil))
        }
        return sources
    }

    /// True for a passphrase-protected key, which Truce cannot unlock without a prompt (it belongs in ssh-agent).
    package static func isEncrypted(_ contents: Data) -> Bool {
        let text = String(decoding: contents, as: UTF8.self)
        if text.contains("ENCRYPTED") { return true }
        let lines = text.split(whereSeparator: \.isNewline).filter { !$0.hasPrefix("-----") }
        guard text.contains("BEGIN OPENSSH PRIVATE KEY"), let body = Data(base64Encoded: lines.joined()) else { return false }
        // openssh-key-v1 NUL, then the cipher name as a length-prefixed string: "none" when unencrypted.
        let magic = Array("openssh-key-v1\0".utf8)
        let bytes = Array(body)
        guard bytes.count > magic.count + 4, Array(bytes[0..<magic.count]) == magic else { return false }
        let length = bytes[magic.count..<magic.count + 4].reduce(0) { $0 << 8 | Int($1) }
        let start = magic.count + 4
        guard bytes.count >= start + length else { return false }
        return Array(bytes[start..<start + length]) != Array("none".utf8)
    }
}

/// Where an http(s) user name and password can come from, in the order Truce tries them.
private enum PasswordSource {
    case given(user: String, password: String, label: String)
    /// git's credential helper, run in this environment.
    case helper([String: String])

    package var label: String {
        switch self {
        case .given(_, _, let label): label
        case .helper: "git credential helper"
        }
    }

    /// The URL's `user:password`, then the environment's user and password, then git's credential helper when the
    /// environment gives one its environment to run in.
    static func available(for url: RemoteURL?, usernameFromURL: String?, in environment: TransferEnvironment) -> [PasswordSource] {
        var sources: [PasswordSource] = []
        if let user = url?.user, let password = url?.password { sources.append(.given(user: user, password: password, label: "the URL's password")) }
        if let password = environment.httpPassword, let user = environment.httpUser ?? usernameFromURL ?? url?.user {
            let label = environment.namesVariables ? "TRUCE_USERNAME/TRUCE_PASSWORD" : "the sync environment's httpPassword"
            sources.append(.given(user: user, password: password, label: label))
        }
        if let childEnvironment = environment.credentialHelperEnvironment { sources.append(.helper(childEnvironment)) }
        return sources
    }
}
