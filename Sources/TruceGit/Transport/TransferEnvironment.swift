import Foundation

/// What one fetch or push may use from its surroundings, handed down by its caller: the git layer never reads the
/// process's environment, its home directory or its user.
///
/// Every field is optional, and nil offers nothing: `.empty` is a transfer
/// with no ssh key, no ssh-agent, no known ssh host, the system's CA bundle,
/// no password beyond the URL's and no credential helper.
package struct TransferEnvironment: Sendable, Equatable {
    /// The directory whose `.ssh` holds the ssh keys offered (`id_ed25519`, `id_ecdsa`, `id_rsa`), and `known_hosts`
    /// unless `knownHostsFile` names another.
    package var homeDirectory: String?
    /// The OpenSSH `known_hosts` file an ssh host key must be in.
    package var knownHostsFile: String?
    /// The user ssh logs in as when the URL names none; nil: `git`.
    package var loginName: String?
    /// The ssh-agent socket whose keys are offered before the key files.
    package var sshAgentSocket: String?
    /// The PEM file of the certificate authorities https trusts instead of the system's bundle.
    package var certificateAuthorityFile: String?
    /// The http(s) user name offered with `httpPassword`; nil: the URL's user.
    package var httpUser: String?
    /// The http(s) password offered after the URL's own.
    package var httpPassword: String?
    /// The environment `git credential` runs in; nil: no credential helper is asked.
    package var credentialHelperEnvironment: [String: String]?
    /// True when the fields are the process's variables (`$HOME`, `$SSH_AUTH_SOCK`, `$GIT_SSL_CAINFO`,
    /// `$TRUCE_USERNAME`/`$TRUCE_PASSWORD`): errors then name the variables to set, and `~` for the home directory;
    /// otherwise they name the fields of the value the caller gives (`SyncEnvironment`).
    package var namesVariables: Bool

    package init(
        homeDirectory: String? = nil, knownHostsFile: String? = nil, loginName: String? = nil, sshAgentSocket: String? = nil,
        certificateAuthorityFile: String? = nil, httpUser: String? = nil, httpPassword: String? = nil,
        credentialHelperEnvironment: [String: String]? = nil, namesVariables: Bool = false
    ) {
        (self.homeDirectory, self.knownHostsFile, self.loginName, self.sshAgentSocket) = (homeDirectory, knownHostsFile, loginName, sshAgentSocket)
        (self.certificateAuthorityFile, self.httpUser, self.httpPassword) = (certificateAuthorityFile, httpUser, httpPassword)
        (self.credentialHelperEnvironment, self.namesVariables) = (credentialHelperEnvironment, namesVariables)
    }

    /// Nothing from the surroundings: what a transfer gets when its caller gives nothing.
    package static let empty = TransferEnvironment()

    /// The known hosts file ssh host keys are checked against: `knownHostsFile`, else the home directory's
    /// `.ssh/known_hosts`; nil when neither is given, and then every host is unknown.
    package var knownHosts: String? { knownHostsFile ?? homeDirectory.map { $0 + "/.ssh/known_hosts" } }

    /// The user ssh logs in as when the URL names none.
    package var sshUser: String { loginName ?? "git" }

    /// `path` as an error shows it: `~/…` under the home directory when the fields are the process's, as a shell
    /// user writes it.
    func shown(_ path: String) -> String {
        guard namesVariables, let home = homeDirectory, !home.isEmpty, path.hasPrefix(home + "/") else { return path }
        return "~" + path.dropFirst(home.count)
    }
}
