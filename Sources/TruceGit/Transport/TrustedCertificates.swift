internal import CGitShim
import Foundation

/// The certificate authorities https transfers trust: libgit2 keeps one set for the whole process
/// (`GIT_OPT_SET_SSL_CERT_LOCATIONS`), so transfers that want different ones take turns.
///
/// A transfer names its CA file, or none for the system's bundle (what
/// libgit2 loads when it starts). Transfers that want the same set run at
/// once; one that wants another waits until none is running, then the set
/// is swapped, never under a handshake. Debian's libgit2 uses mbedTLS, where
/// setting a file replaces the bundle, as `GIT_SSL_CAINFO` does for git;
/// going back to the system's bundle loads the bundle file again.
enum TrustedCertificates {
    private final class Gate: @unchecked Sendable {
        let condition = NSCondition()
        /// The CA file libgit2 trusts now; nil: the system's bundle.
        var current: String?
        /// Transfers running with `current`.
        var users = 0
    }

    private static let gate = Gate()

    /// Where the system's bundle is, by distribution: libgit2 loads the one it was built with (Debian's first).
    static let systemBundles = [
        "/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/ca-bundle.pem", "/etc/pki/tls/cacert.pem",
        "/etc/ssl/cert.pem",
    ]

    /// Runs `body` while libgit2 trusts the CAs of `environment` (its `certificateAuthorityFile`, else the system's).
    static func trusting<Value>(_ environment: TransferEnvironment, _ body: () throws(GitError) -> Value) throws(GitError) -> Value {
        let file = environment.certificateAuthorityFile.flatMap { $0.isEmpty ? nil : $0 }
        try enter(file, environment)
        defer {
            gate.condition.lock()
            gate.users -= 1
            gate.condition.broadcast()
            gate.condition.unlock()
        }
        return try body()
    }

    private static func enter(_ file: String?, _ environment: TransferEnvironment) throws(GitError) {
        gate.condition.lock()
        defer { gate.condition.unlock() }
        while gate.users > 0, gate.current != file { gate.condition.wait() }
        if gate.current != file {
            try load(file, environment)
            gate.current = file
        }
        gate.users += 1
    }

    /// Makes libgit2 trust `file`, or the system's bundle again.
    private static func load(_ file: String?, _ environment: TransferEnvironment) throws(GitError) {
        Libgit2.ensureInitialized()
        guard let file else {
            guard let bundle = systemBundles.first(where: { FileManager.default.fileExists(atPath: $0) }) else {
                throw GitError(
                    operation: "trust the system's certificate authorities again", code: -1, errorClass: 0,
                    message: "no CA bundle found at \(systemBundles.joined(separator: ", "))")
            }
            let code = bundle.withCString { truce_git_set_ssl_cert_file($0) }
            if code < 0 { throw GitError.last("trust the certificates in \(bundle)", code: code) }
            return
        }
        let code = file.withCString { truce_git_set_ssl_cert_file($0) }
        guard code < 0 else { return }
        // The message says which setting named the file: a sync's error shows the message alone.
        let setting = environment.namesVariables ? "GIT_SSL_CAINFO" : "the sync environment's certificateAuthorityFile"
        let error = GitError.last("trust the certificates in \(file)", code: code)
        throw GitError(
            operation: error.operation, code: code, errorClass: error.errorClass,
            message: "cannot trust the certificates in \(setting) (\(file)): \(error.message)")
    }
}
