import Foundation

/// The parts of a remote's URL that credentials and error messages need, and the password kept out of sight.
package struct RemoteURL: Sendable {
    package let scheme: String
    package let user: String?
    package let password: String?
    package let host: String
    package let port: Int?
    package let path: String

    /// Parses `scheme://[user[:password]@]host[:port]/path`; nil for a local path or scp-style `user@host:path`.
    package init?(_ text: String) {
        guard let components = URLComponents(string: text), let scheme = components.scheme, let host = components.host else { return nil }
        self.scheme = scheme.lowercased()
        (user, password) = (components.user, components.password)
        (self.host, port, path) = (host, components.port, components.path)
    }

    /// `host` or `host:port`, as git's credential protocol names a server.
    package var hostAndPort: String { port.map { "\(host):\($0)" } ?? host }

    /// Every `scheme://user:password@` in `text` with the password removed (`scheme://user@`), libgit2's messages included.
    package static func redactingPasswords(in text: String) -> String {
        // Greedy up to the last `@` before the path: an unencoded `@` in a password is still removed.
        text.replacingOccurrences(of: #"([A-Za-z][A-Za-z0-9+.-]*://[^/:@\s]*):[^/\s]*@"#, with: "$1@", options: .regularExpression)
    }
}
