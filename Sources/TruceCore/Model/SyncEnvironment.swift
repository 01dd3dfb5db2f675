#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a sync may use from the machine it runs on to reach a hub over ssh or http(s): ssh keys and known hosts, an
/// ssh-agent, the certificate authorities https trusts, a password, git's credential helpers.
///
/// The library reads no environment variable, home directory or user of
/// the process: a sync uses what this value carries and nothing else. An
/// app gives it when it opens the store (`syncEnvironment:`), or to one
/// `sync(with:environment:)`; `.empty`, the default, offers nothing: no ssh
/// key, no ssh-agent, no known ssh host, the system's CA bundle, no password
/// beyond the URL's own and no credential helper. A sync with a hub on a
/// local path, `file://` or `git://` needs none of it.
///
/// An app that wants what `git` and the `truce` command use (`$HOME/.ssh`,
/// `$SSH_AUTH_SOCK`, `$GIT_SSL_CAINFO`, `$TRUCE_USERNAME`/`$TRUCE_PASSWORD`,
/// and git's credential helpers) gives the process's variables:
///
/// ```swift
/// let store = try DocumentStore(
///     directory: url, device: "laptop", syncEnvironment: .fromProcess(ProcessInfo.processInfo.environment))
/// ```
///
/// A sandboxed app names its own files instead, and keeps the password out
/// of the process's environment:
///
/// ```swift
/// let environment = SyncEnvironment(homeDirectory: container.path, httpPassword: keychainPassword)
/// ```
public struct SyncEnvironment: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The directory whose `.ssh` holds the ssh keys a sync offers (`id_ed25519`, `id_ecdsa`, `id_rsa`, each with its
    /// `.pub` when there is one; a key with a passphrase is skipped: give an `sshAgentSocket` for it) and, unless
    /// `knownHostsFile` names another, the `known_hosts` file ssh host keys are checked against.
    public var homeDirectory: String?
    /// The OpenSSH `known_hosts` file ssh host keys are checked against; nil: `homeDirectory`'s `.ssh/known_hosts`.
    ///
    /// With neither, every ssh host is unknown, and the sync fails saying
    /// which to give.
    public var knownHostsFile: String?
    /// The user ssh logs in as when the URL names none (`ssh://hub.example/…`); nil: `git`.
    public var loginName: String?
    /// The socket of an ssh-agent whose keys a sync offers before the key files; nil: no agent.
    public var sshAgentSocket: String?
    /// A PEM file of the certificate authorities https trusts, in place of the system's bundle (as git's
    /// `GIT_SSL_CAINFO`); nil: the system's bundle.
    public var certificateAuthorityFile: String?
    /// The http(s) user name offered with `httpPassword`; nil: the URL's user.
    public var httpUser: String?
    /// The http(s) password offered after the URL's own (`https://user:password@…`); nil: none.
    public var httpPassword: String?
    /// The environment `git credential fill` runs in, to ask the user's git credential helpers for an http(s)
    /// password (`approve` and `reject` after the sync tell them how it went); nil: no helper is asked.
    ///
    /// Its `HOME` says whose `~/.gitconfig` names the helpers; git never
    /// prompts (`GIT_TERMINAL_PROMPT=0` is added).
    public var credentialHelperEnvironment: [String: String]?
    /// The passphrase that protects this store's device key for encrypted hubs (Argon2id, then XChaCha20-Poly1305);
    /// nil: the key file is protected by its mode alone (0600).
    ///
    /// Given when the key is made (the store's first `encryptHub`,
    /// `joinEncryptedHub` or `recoverEncryptedHub`), the key is written
    /// sealed with it, and every later use of the key needs it again.
    public var deviceKeyPassphrase: String?
    /// True for a value `fromProcess` made: errors then name the variables to set rather than these properties.
    var readFromProcess = false

    /// An environment with what is given, and nothing else.
    public init(
        homeDirectory: String? = nil, knownHostsFile: String? = nil, loginName: String? = nil, sshAgentSocket: String? = nil,
        certificateAuthorityFile: String? = nil, httpUser: String? = nil, httpPassword: String? = nil,
        credentialHelperEnvironment: [String: String]? = nil
    ) {
        (self.homeDirectory, self.knownHostsFile, self.loginName, self.sshAgentSocket) = (homeDirectory, knownHostsFile, loginName, sshAgentSocket)
        (self.certificateAuthorityFile, self.httpUser, self.httpPassword) = (certificateAuthorityFile, httpUser, httpPassword)
        self.credentialHelperEnvironment = credentialHelperEnvironment
    }

    /// Nothing from the machine: no ssh key or agent, no known ssh host, the system's CA bundle, no password beyond
    /// the URL's, no credential helper. What a store opened without `syncEnvironment:` syncs with.
    public static let empty = SyncEnvironment()

    /// What `git` and the `truce` command take from a process whose environment variables are `environment`
    /// (pass `ProcessInfo.processInfo.environment`): the library does not read them itself.
    ///
    /// - `HOME` (else the user's home in the password database): the ssh
    ///   keys in `~/.ssh` and `~/.ssh/known_hosts`;
    /// - the login name (the password database's, else `USER`): the ssh
    ///   user when the URL names none;
    /// - `SSH_AUTH_SOCK`: the ssh-agent;
    /// - `GIT_SSL_CAINFO`: the CA file https trusts;
    /// - `TRUCE_USERNAME` and `TRUCE_PASSWORD`: the http(s) user and password;
    /// - `TRUCE_KEY_PASSPHRASE`: the passphrase of the device key for encrypted hubs;
    /// - all of `environment`: git's credential helpers run in it.
    ///
    /// Errors then name these variables (`set GIT_SSL_CAINFO to its PEM
    /// file`), as the `truce` command prints them.
    public static func fromProcess(_ environment: [String: String]) -> SyncEnvironment {
        let account = getpwuid(getuid())?.pointee
        var value = SyncEnvironment(
            homeDirectory: nonEmpty(environment["HOME"]) ?? account.flatMap { $0.pw_dir.map { String(cString: $0) } },
            loginName: account.flatMap { $0.pw_name.map { String(cString: $0) } } ?? environment["USER"],
            sshAgentSocket: nonEmpty(environment["SSH_AUTH_SOCK"]), certificateAuthorityFile: nonEmpty(environment["GIT_SSL_CAINFO"]),
            httpUser: environment["TRUCE_USERNAME"], httpPassword: environment["TRUCE_PASSWORD"], credentialHelperEnvironment: environment)
        value.deviceKeyPassphrase = environment["TRUCE_KEY_PASSPHRASE"]
        value.readFromProcess = true
        return value
    }

    private static func nonEmpty(_ text: String?) -> String? { text.flatMap { $0.isEmpty ? nil : $0 } }

    /// The fields given, without the password, the passphrase or the credential helper's environment (which may hold secrets).
    public var description: String {
        let fields: [(String, String?)] = [
            ("homeDirectory", homeDirectory), ("knownHostsFile", knownHostsFile), ("loginName", loginName), ("sshAgentSocket", sshAgentSocket),
            ("certificateAuthorityFile", certificateAuthorityFile), ("httpUser", httpUser), ("httpPassword", httpPassword.map { _ in "<hidden>" }),
            ("credentialHelperEnvironment", credentialHelperEnvironment.map { "<\($0.count) variables>" }),
            ("deviceKeyPassphrase", deviceKeyPassphrase.map { _ in "<hidden>" }),
        ]
        let given = fields.compactMap { name, value in value.map { "\(name): \($0)" } }
        return "SyncEnvironment(" + (readFromProcess ? ["fromProcess"] + given : given).joined(separator: ", ") + ")"
    }

    /// As `description`: a debugger or a log never shows the password.
    public var debugDescription: String { description }

    /// `description` alone, so that `dump` shows no password either.
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}
