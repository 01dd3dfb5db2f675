internal import CLibgit2
import Foundation

/// The credentials one transfer offers a server, each source once and in git's order, until the server takes one.
///
/// libgit2 asks again after every credential the server refused, so a source
/// is never offered twice and an exhausted list ends the transfer with
/// "authentication failed for URL" (password removed) instead of a loop.
package final class CredentialSupplier {
    private let url: String
    private let parsed: RemoteURL?
    private var sshSources: [SSHSource]?
    private var passwordSources: [PasswordSource]?
    /// What was offered, for the failure message.
    private(set) var tried: [String] = []
    /// A credential from git's helper, offered and not yet confirmed by the server.
    private var helperCredential: GitCredentialHelper.Credential?

    package init(url: String) {
        self.url = url
        parsed = RemoteURL(url)
    }

    /// Fills `out` with the next credential of a type in `allowed`, or returns GIT_EAUTH with libgit2's error set.
    func next(_ out: UnsafeMutablePointer<UnsafeMutablePointer<git_credential>?>, usernameFromURL: String?, allowed: UInt32) -> Int32 {
        // Asked again after a helper's credential: the server refused it, so the helper must forget it.
        if let refused = helperCredential {
            GitCredentialHelper.run("reject", refused)
            helperCredential = nil
        }
        if allowed & GIT_CREDENTIAL_USERNAME.rawValue != 0 {
            return git_credential_username_new(out, usernameFromURL ?? parsed?.user ?? Self.loginName)
        }
        if allowed & GIT_CREDENTIAL_SSH_KEY.rawValue != 0 {
            let user = usernameFromURL ?? parsed?.user ?? Self.loginName
            if sshSources == nil { sshSources = SSHSource.available() }
            while let source = sshSources?.first {
                sshSources?.removeFirst()
                tried.append(source.label)
                let code: Int32
                switch source {
                case .agent: code = git_credential_ssh_key_from_agent(out, user)
                case .keyFile(let privateKey, let publicKey): code = git_credential_ssh_key_new(out, user, publicKey, privateKey, nil)
                }
                if code == 0 { return 0 }
            }
        }
        if allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT.rawValue != 0 {
            if passwordSources == nil { passwordSources = PasswordSource.available(for: parsed, usernameFromURL: usernameFromURL) }
            while let source = passwordSources?.first {
                passwordSources?.removeFirst()
                tried.append(source.label)
                let credential: GitCredentialHelper.Credential?
                switch source {
                case .given(let user, let password, _): credential = .init(user: user, password: password)
                case .helper:
                    credential = parsed.flatMap { GitCredentialHelper.fill(for: $0, user: usernameFromURL) }
                    helperCredential = credential
                }
                guard let credential else { continue }
                return git_credential_userpass_plaintext_new(out, credential.user, credential.password)
            }
        }
        let sources = tried.isEmpty ? "no credentials found" : "tried " + tried.joined(separator: ", ")
        git_error_set_str(Int32(GIT_ERROR_NET.rawValue), "authentication failed for \(RemoteURL.redactingPasswords(in: url)) (\(sources))")
        return GIT_EAUTH.rawValue
    }

    /// The transfer succeeded: a helper's credential is stored for next time, as git does.
    package func transferSucceeded() {
        if let accepted = helperCredential { GitCredentialHelper.run("approve", accepted) }
        helperCredential = nil
    }

    /// The transfer failed: a helper's credential the server refused is forgotten.
    package func transferFailed(_ error: GitError) {
        if let refused = helperCredential, error.code == GIT_EAUTH.rawValue { GitCredentialHelper.run("reject", refused) }
        helperCredential = nil
    }

    /// The user name ssh uses when the URL names none: the local login, as OpenSSH does.
    package static var loginName: String {
        if let entry = getpwuid(getuid()), let name = entry.pointee.pw_name { return String(cString: name) }
        return ProcessInfo.processInfo.environment["USER"] ?? "git"
    }

    /// The home directory whose `.ssh` holds the user's keys: `$HOME`, as libgit2 uses for `known_hosts`.
    package static var homeDirectory: String { ProcessInfo.processInfo.environment["HOME"] ?? NSHomeDirectory() }
}

/// Where an ssh key can come from, in the order OpenSSH tries them.
private enum SSHSource {
    case agent
    case keyFile(privateKey: String, publicKey: String?)

    package var label: String {
        switch self {
        case .agent: "ssh-agent"
        case .keyFile(let privateKey, _): privateKey.replacingOccurrences(of: CredentialSupplier.homeDirectory, with: "~")
        }
    }

    /// The agent when one is running, then `~/.ssh/id_ed25519`, `id_ecdsa`, `id_rsa` that exist and need no passphrase.
    package static func available() -> [SSHSource] {
        var sources: [SSHSource] = []
        // libssh2 fails hard (not "try the next key") when it cannot reach an agent, so offer one only when it is there.
        if let socket = ProcessInfo.processInfo.environment["SSH_AUTH_SOCK"], !socket.isEmpty, FileManager.default.fileExists(atPath: socket) {
            sources.append(.agent)
        }
        let directory = CredentialSupplier.homeDirectory + "/.ssh/"
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
    case helper

    package var label: String {
        switch self {
        case .given(_, _, let label): label
        case .helper: "git credential helper"
        }
    }

    /// The URL's `user:password`, then `TRUCE_USERNAME`/`TRUCE_PASSWORD`, then git's credential helper.
    package static func available(for url: RemoteURL?, usernameFromURL: String?) -> [PasswordSource] {
        var sources: [PasswordSource] = []
        if let user = url?.user, let password = url?.password { sources.append(.given(user: user, password: password, label: "the URL's password")) }
        let environment = ProcessInfo.processInfo.environment
        if let password = environment["TRUCE_PASSWORD"], let user = environment["TRUCE_USERNAME"] ?? usernameFromURL ?? url?.user {
            sources.append(.given(user: user, password: password, label: "TRUCE_USERNAME/TRUCE_PASSWORD"))
        }
        sources.append(.helper)
        return sources
    }
}
