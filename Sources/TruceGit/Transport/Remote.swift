internal import CGitShim
internal import CLibgit2
import Foundation

/// Objects and bytes a transfer moved so far, as libgit2 reports them.
package struct TransferCounts: Sendable, Equatable {
    package var objects = 0
    package var bytes = 0
}

extension Repository {
    /// Returns the remote's refs matching `pattern` as it advertised them, after downloading every object the ones
    /// `wanting` picks from them need.
    ///
    /// No local reference is written: the caller decides which advertised
    /// refs become local ones. Works for any transport libgit2 has: a local
    /// path, `file://`, git://, ssh and http(s), with credentials from
    /// `CredentialSupplier`. Over http(s), git:// and ssh:// the negotiation
    /// names the tips of this repository's references first and alone (at
    /// most 20 of them), where libgit2 would name the 20 newest commits of
    /// their histories, each acknowledged by the server and, over http, sent
    /// and acknowledged twice: a fetch into a repository whose references the
    /// server has (a `Quarantine` offering what the hub advertised last time)
    /// settles in one round on those. Should the server have none, libgit2's
    /// next round goes on down the histories. `progress` hears the objects and bytes received;
    /// once `cancellation` is set, the next progress callback aborts the download (libgit2 then fails with `GIT_EUSER`).
    package func fetch(
        from url: String, refsMatching pattern: String, wanting: ([(name: String, target: ObjectID)]) throws(GitError) -> [String],
        progress: ((TransferCounts) -> Void)? = nil, cancellation: Cancellation? = nil
    ) throws(GitError) -> [(name: String, target: ObjectID)] {
        let session = TransferSession(url: url, progress: progress, cancellation: cancellation)
        return try session.run { () throws(GitError) in
            let remote = try session.openRemote(in: handle)
            defer { git_remote_free(remote) }
            var callbacks = try session.callbacks()
            callbacks.transport = { out, owner, payload in
                guard let session = TransferSession.from(payload) else { return GIT_ERROR.rawValue }
                return truce_transport_with_known_haves(out, owner, session.knownHaves)
            }
            try session.check(git_remote_connect(remote, GIT_DIRECTION_FETCH, &callbacks, nil, nil), "connect to")
            defer { git_remote_disconnect(remote) }

            var heads: UnsafeMutablePointer<UnsafePointer<git_remote_head>?>?
            var count = 0
            try session.check(git_remote_ls(&heads, &count, remote), "list the references of")
            var advertised: [(String, ObjectID)] = []
            for index in 0..<count {
                guard let head = heads?[index]?.pointee else { continue }
                let name = String(cString: head.name)
                if fnmatch(pattern, name, 0) == 0 { advertised.append((name, ObjectID(head.oid))) }
            }
            let wanted = try wanting(advertised)
            guard !wanted.isEmpty else { return advertised }
            // Read when libgit2's own negotiation would read them, all the same.
            session.startNegotiation(from: Set(try references(under: "refs/").map(\.target)).sorted())
            var options = git_fetch_options()
            try check(git_fetch_options_init(&options, UInt32(GIT_FETCH_OPTIONS_VERSION)), "prepare fetch")
            options.callbacks = callbacks
            options.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE
            options.update_fetchhead = 0
            // A refspec needs a destination, but only update_tips would write it, and it is never called.
            try withStringArray(wanted.map { "\($0):\($0)" }) { refspecs throws(GitError) in
                try session.check(git_remote_download(remote, refspecs, &options), "download from")
            }
            return advertised
        }
    }

    /// Updates the remote's refs as git's `refspecs` say (`+src:dst` forced, `:dst` deletes), sending the objects they need.
    ///
    /// Returns how many refs the remote did not already have at that value;
    /// `progress` hears the objects and bytes sent; `cancellation`, once set, aborts the push at its next progress callback.
    @discardableResult
    package func push(
        refspecs: [String], to url: String, progress: ((TransferCounts) -> Void)? = nil, cancellation: Cancellation? = nil
    ) throws(GitError) -> Int {
        guard !refspecs.isEmpty else { return 0 }
        let session = TransferSession(url: url, progress: progress, cancellation: cancellation)
        try session.run { () throws(GitError) in
            let remote = try session.openRemote(in: handle)
            defer { git_remote_free(remote) }
            var options = git_push_options()
            try check(git_push_options_init(&options, UInt32(GIT_PUSH_OPTIONS_VERSION)), "prepare push")
            options.callbacks = try session.callbacks()
            try withStringArray(refspecs) { array throws(GitError) in
                try session.check(git_remote_push(remote, array, &options), "push to")
            }
        }
        if let first = session.refused.first {
            throw GitError(
                operation: "push to \(RemoteURL.redactingPasswords(in: url))", code: -1, errorClass: 0,
                message: "the remote refused \(session.refused.count) reference(s), first \(first)")
        }
        return session.updatedReferences
    }
}

/// The state libgit2's callbacks share during one fetch or push: credentials, refused refs and counts.
///
/// libgit2 hands every callback the same payload pointer; it points at this
/// object, which `run` keeps alive until the remote is freed.
private final class TransferSession {
    package let url: String
    package let credentials: CredentialSupplier
    package let progress: ((TransferCounts) -> Void)?
    /// Set by the task that started the transfer when it is cancelled: the next callback returns an error to libgit2.
    package let cancellation: Cancellation?
    /// `name: reason` for every ref the remote refused; git_remote_push succeeds even then.
    package var refused: [String] = []
    /// Refs the push changed on the remote (it lacked them or had another value).
    package var updatedReferences = 0
    /// What a fetch's transport names first in its negotiation (`startNegotiation`); empty, libgit2 negotiates alone.
    /// Nil only when memory ran out: the fetch then negotiates as libgit2 does.
    package let knownHaves: OpaquePointer?

    package init(url: String, progress: ((TransferCounts) -> Void)?, cancellation: Cancellation?) {
        self.url = url
        credentials = CredentialSupplier(url: url)
        self.progress = progress
        self.cancellation = cancellation
        knownHaves = truce_known_haves_new()
    }

    deinit { truce_known_haves_free(knownHaves) }

    /// Makes the fetch's first round of "have" lines name `tips` alone (sorted, so every fetch names them alike); more
    /// than one round of them, or none, and libgit2 negotiates as it would alone.
    package func startNegotiation(from tips: [ObjectID]) {
        guard let knownHaves, tips.count <= Int(TRUCE_KNOWN_HAVES_MAX) else { return }
        let raw = tips.map(\.raw)
        _ = raw.withUnsafeBufferPointer { truce_known_haves_set(knownHaves, $0.baseAddress, $0.count) }
    }

    /// What a transfer callback returns to libgit2: 0 goes on; a negative value (after a cancellation) stops the
    /// transfer, and the fetch or push fails with it. Read after `progress` ran, so a cancel from it stops at once.
    package var callbackResult: Int32 { cancellation?.isCancelled == true ? GIT_EUSER.rawValue : 0 }

    package var payload: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    package static func from(_ payload: UnsafeMutableRawPointer?) -> TransferSession? {
        payload.map { Unmanaged<TransferSession>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Runs `body` with this session alive throughout, then tells the credential helper how it went.
    package func run<Value>(_ body: () throws(GitError) -> Value) throws(GitError) -> Value {
        let outcome: Result<Value, GitError> = withExtendedLifetime(self) {
            do throws(GitError) { return .success(try body()) } catch { return .failure(error) }
        }
        switch outcome {
        case .success: credentials.transferSucceeded()
        case .failure(let error): credentials.transferFailed(error)
        }
        return try outcome.get()
    }

    package func openRemote(in repository: OpaquePointer) throws(GitError) -> OpaquePointer? {
        try Self.trustCertificatesFromEnvironment()
        var remote: OpaquePointer?
        try check(git_remote_create_anonymous(&remote, repository, url), "open remote")
        return remote
    }

    /// Throws a `GitError` for a failed call, in words that say what to do and never with a password.
    package func check(_ code: Int32, _ operation: String) throws(GitError) {
        guard code < 0 else { return }
        let error = GitError.last("\(operation) \(RemoteURL.redactingPasswords(in: url))", code: code)
        var message = RemoteURL.redactingPasswords(in: error.message)
        if code == GIT_ECERTIFICATE.rawValue { message = certificateAdvice(libgit2Message: message) }
        throw GitError(operation: error.operation, code: code, errorClass: error.errorClass, message: message)
    }

    private func certificateAdvice(libgit2Message: String) -> String {
        let parsed = RemoteURL(url)
        let host = parsed?.host ?? "the server"
        if parsed?.scheme == "ssh" || parsed == nil {
            let port = parsed?.port.map { "-p \($0) " } ?? ""
            return "the ssh host key of \(parsed?.hostAndPort ?? host) is not in ~/.ssh/known_hosts; after checking its fingerprint, "
                + "trust it with: ssh-keyscan \(port)\(host) >> ~/.ssh/known_hosts"
        }
        return "the TLS certificate of \(parsed?.hostAndPort ?? host) is not trusted (\(libgit2Message)); "
            + "to trust your own CA, set GIT_SSL_CAINFO to its PEM file"
    }

    /// libgit2's callbacks for this transfer, all pointing back at this session.
    package func callbacks() throws(GitError) -> git_remote_callbacks {
        var callbacks = git_remote_callbacks()
        try check(git_remote_init_callbacks(&callbacks, UInt32(GIT_REMOTE_CALLBACKS_VERSION)), "prepare remote callbacks for")
        callbacks.payload = payload
        callbacks.credentials = { out, _, usernameFromURL, allowed, payload in
            guard let out, let session = TransferSession.from(payload) else { return GIT_PASSTHROUGH.rawValue }
            return session.credentials.next(out, usernameFromURL: usernameFromURL.map { String(cString: $0) }, allowed: allowed)
        }
        callbacks.transfer_progress = { stats, payload in
            if let stats, let session = TransferSession.from(payload) {
                session.progress?(TransferCounts(objects: Int(stats.pointee.received_objects), bytes: stats.pointee.received_bytes))
                return session.callbackResult
            }
            return 0
        }
        callbacks.push_transfer_progress = { current, _, bytes, payload in
            guard let session = TransferSession.from(payload) else { return 0 }
            session.progress?(TransferCounts(objects: Int(current), bytes: bytes))
            return session.callbackResult
        }
        callbacks.push_negotiation = { updates, count, payload in
            guard let session = TransferSession.from(payload), let updates else { return 0 }
            session.updatedReferences =
                (0..<count).filter { index in
                    guard let update = updates[index]?.pointee else { return false }
                    return ObjectID(update.src) != ObjectID(update.dst)
                }.count
            return 0
        }
        callbacks.push_update_reference = { name, status, payload in
            if let name, let status, let session = TransferSession.from(payload) {
                session.refused.append("\(String(cString: name)): \(String(cString: status))")
            }
            return 0
        }
        return callbacks
    }

    /// git's `GIT_SSL_CAINFO`: a PEM file of CAs to trust for https instead of the system bundle. Read once per process.
    private static let certificateSetup: GitError? = {
        guard let file = ProcessInfo.processInfo.environment["GIT_SSL_CAINFO"], !file.isEmpty else { return nil }
        Libgit2.ensureInitialized()
        let code = file.withCString { truce_git_set_ssl_cert_file($0) }
        return code < 0 ? GitError.last("trust the certificates in GIT_SSL_CAINFO=\(file)", code: code) : nil
    }()

    private static func trustCertificatesFromEnvironment() throws(GitError) {
        if let error = certificateSetup { throw error }
    }
}

/// Calls `body` with a `git_strarray` of `strings`, valid only inside `body`.
@discardableResult
func withStringArray<Value>(_ strings: [String], _ body: (UnsafePointer<git_strarray>) throws(GitError) -> Value) throws(GitError) -> Value {
    var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
    defer { for pointer in pointers { free(pointer) } }
    let outcome: Result<Value, GitError> = pointers.withUnsafeMutableBufferPointer { buffer in
        var array = git_strarray(strings: buffer.baseAddress, count: buffer.count)
        do throws(GitError) { return .success(try body(&array)) } catch { return .failure(error) }
    }
    return try outcome.get()
}
