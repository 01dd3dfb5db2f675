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
    /// Keys, known hosts, CAs and passwords come from `environment` alone.
    package func fetch(
        from url: String, refsMatching pattern: String, wanting: ([(name: String, target: ObjectID)]) throws(GitError) -> [String],
        environment: TransferEnvironment = .empty, progress: ((TransferCounts) -> Void)? = nil, cancellation: Cancellation? = nil
    ) throws(GitError) -> [(name: String, target: ObjectID)] {
        let session = TransferSession(url: url, environment: environment, progress: progress, cancellation: cancellation)
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
    /// A ref named in `expected` moves only from that value (nil: only if
    /// the remote lacks it), as git's `--force-with-lease` moves one: libgit2
    /// sends receive-pack the value it advertised to this push, which moves
    /// the ref only from there, and this push stops before sending anything
    /// when that is not the expected one. It then fails with `GIT_EMODIFIED`
    /// (`GitError.isConcurrentModification`) and changes nothing.
    ///
    /// Returns how many refs the remote did not already have at that value;
    /// `progress` hears the objects and bytes sent; `cancellation`, once set, aborts the push at its next progress callback.
    /// Keys, known hosts, CAs and passwords come from `environment` alone.
    @discardableResult
    package func push(
        refspecs: [String], to url: String, expecting expected: [String: ObjectID?] = [:], environment: TransferEnvironment = .empty,
        progress: ((TransferCounts) -> Void)? = nil, cancellation: Cancellation? = nil
    ) throws(GitError) -> Int {
        guard !refspecs.isEmpty else { return 0 }
        let session = TransferSession(url: url, environment: environment, progress: progress, cancellation: cancellation)
        session.expected = expected
        do throws(GitError) {
            try push(refspecs, in: session)
        } catch {
            guard let moved = session.moved.first else { throw error }
            throw GitError(
                operation: "push to \(RemoteURL.redactingPasswords(in: url))", code: GIT_EMODIFIED.rawValue, errorClass: 0,
                message: "\(moved) moved on the remote since it was read")
        }
        // receive-pack refuses an expected ref that moved after it advertised it (another push between its listing and
        // its update): that is a moved ref too.
        let raced = session.refused.filter { refusal in
            expected.keys.contains { refusal.hasPrefix($0 + ": ") }
                && ["failed to update ref", "lock", "stale info"].contains { refusal.contains($0) }
        }
        if let moved = raced.first, raced.count == session.refused.count {
            throw GitError(
                operation: "push to \(RemoteURL.redactingPasswords(in: url))", code: GIT_EMODIFIED.rawValue, errorClass: 0,
                message: "\(moved) (it moved on the remote since it was read)")
        }
        if let first = session.refused.first {
            throw GitError(
                operation: "push to \(RemoteURL.redactingPasswords(in: url))", code: -1, errorClass: 0,
                message: "the remote refused \(session.refused.count) reference(s), first \(first)")
        }
        return session.updatedReferences
    }

    private func push(_ refspecs: [String], in session: TransferSession) throws(GitError) {
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
    }
}

/// The state libgit2's callbacks share during one fetch or push: credentials, host keys, refused refs and counts.
///
/// libgit2 hands every callback the same payload pointer; it points at this
/// object, which `run` keeps alive until the remote is freed.
private final class TransferSession {
    package let url: String
    package let environment: TransferEnvironment
    package let credentials: CredentialSupplier
    /// Why the ssh host key was refused, for the error's advice; nil until a key is refused.
    private var hostKeyRefusal: (verdict: KnownHosts.Verdict?, file: String?)?
    package let progress: ((TransferCounts) -> Void)?
    /// Set by the task that started the transfer when it is cancelled: the next callback returns an error to libgit2.
    package let cancellation: Cancellation?
    /// `name: reason` for every ref the remote refused; git_remote_push succeeds even then.
    package var refused: [String] = []
    /// Refs the push changed on the remote (it lacked them or had another value).
    package var updatedReferences = 0
    /// Refs a push moves only from these values (nil: only if absent), and those found elsewhere, which stopped it.
    package var expected: [String: ObjectID?] = [:]
    package var moved: [String] = []
    /// What a fetch's transport names first in its negotiation (`startNegotiation`); empty, libgit2 negotiates alone.
    /// Nil only when memory ran out: the fetch then negotiates as libgit2 does.
    package let knownHaves: OpaquePointer?

    package init(url: String, environment: TransferEnvironment, progress: ((TransferCounts) -> Void)?, cancellation: Cancellation?) {
        self.url = url
        self.environment = environment
        credentials = CredentialSupplier(url: url, environment: environment)
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

    /// Runs `body` with this session alive throughout (over http(s), with libgit2 trusting the environment's CAs),
    /// then tells the credential helper how it went.
    package func run<Value>(_ body: () throws(GitError) -> Value) throws(GitError) -> Value {
        let outcome: Result<Value, GitError> = withExtendedLifetime(self) {
            do throws(GitError) {
                guard RemoteURL(url)?.scheme.hasPrefix("http") == true else { return .success(try body()) }
                return .success(try TrustedCertificates.trusting(environment, body))
            } catch {
                return .failure(error)
            }
        }
        switch outcome {
        case .success: credentials.transferSucceeded()
        case .failure(let error): credentials.transferFailed(error)
        }
        return try outcome.get()
    }

    package func openRemote(in repository: OpaquePointer) throws(GitError) -> OpaquePointer? {
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
        if parsed?.scheme.contains("ssh") == true || parsed == nil {
            let port = parsed?.port.map { "-p \($0) " } ?? ""
            let server = parsed?.hostAndPort ?? host
            let keyscan = "ssh-keyscan \(port)\(host)"
            guard let file = hostKeyRefusal?.file ?? environment.knownHosts else {
                let give =
                    environment.namesVariables
                    ? "set HOME to the directory whose .ssh/known_hosts lists it"
                    : "give the sync a SyncEnvironment whose homeDirectory holds .ssh/known_hosts, or a knownHostsFile, listing it"
                return "the ssh host key of \(server) cannot be checked: no known_hosts file was given; \(give) "
                    + "(after checking its fingerprint: \(keyscan))"
            }
            let shown = environment.shown(file)
            switch hostKeyRefusal?.verdict {
            case .changed?:
                return "the ssh host key of \(server) is not the one \(shown) lists for it: the key changed, or someone is in between; "
                    + "check its fingerprint before you replace its line"
            case .revoked?:
                return "the ssh host key of \(server) is revoked in \(shown)"
            default:
                return "the ssh host key of \(server) is not in \(shown); after checking its fingerprint, trust it with: \(keyscan) >> \(shown)"
            }
        }
        let setting =
            environment.namesVariables ? "set GIT_SSL_CAINFO to its PEM file" : "give its PEM file as the sync environment's certificateAuthorityFile"
        return "the TLS certificate of \(parsed?.hostAndPort ?? host) is not trusted (\(libgit2Message)); to trust your own CA, \(setting)"
    }

    /// libgit2's verdict on an ssh host key replaced by the environment's known_hosts file: 0 accepts the key, and
    /// GIT_ECERTIFICATE refuses it (libgit2 looked in the process's `~/.ssh/known_hosts`, which is not the caller's).
    func checkHostKey(_ certificate: UnsafePointer<git_cert>, host: String?) -> Int32 {
        guard certificate.pointee.cert_type == GIT_CERT_HOSTKEY_LIBSSH2 else { return GIT_PASSTHROUGH.rawValue }
        let hostKey = UnsafeRawPointer(certificate).assumingMemoryBound(to: git_cert_hostkey.self).pointee
        guard hostKey.type.rawValue & GIT_CERT_SSH_RAW.rawValue != 0, let raw = hostKey.hostkey, let host = host ?? RemoteURL(url)?.host else {
            return refuseHostKey(.unknown, file: environment.knownHosts)
        }
        let key = Array(UnsafeRawBufferPointer(start: raw, count: hostKey.hostkey_len))
        guard let file = environment.knownHosts else { return refuseHostKey(nil, file: nil) }
        let verdict = KnownHosts(FileManager.default.contents(atPath: file).map { String(decoding: $0, as: UTF8.self) } ?? "")
            .verdict(for: key, host: host, port: RemoteURL(url)?.port ?? 22)
        return verdict == .known ? 0 : refuseHostKey(verdict, file: file)
    }

    private func refuseHostKey(_ verdict: KnownHosts.Verdict?, file: String?) -> Int32 {
        hostKeyRefusal = (verdict, file)
        git_error_set_str(Int32(GIT_ERROR_SSH.rawValue), "invalid or unknown remote ssh hostkey")
        return GIT_ECERTIFICATE.rawValue
    }

    /// libgit2's callbacks for this transfer, all pointing back at this session.
    package func callbacks() throws(GitError) -> git_remote_callbacks {
        var callbacks = git_remote_callbacks()
        try check(git_remote_init_callbacks(&callbacks, UInt32(GIT_REMOTE_CALLBACKS_VERSION)), "prepare remote callbacks for")
        callbacks.payload = payload
        // ssh host keys are checked against the environment's known_hosts; https certificates stay libgit2's to check.
        if RemoteURL(url).map({ $0.scheme.contains("ssh") }) ?? true {
            callbacks.certificate_check = { certificate, _, host, payload in
                guard let certificate, let session = TransferSession.from(payload) else { return GIT_PASSTHROUGH.rawValue }
                return session.checkHostKey(certificate, host: host.map { String(cString: $0) })
            }
        }
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
            let all = (0..<count).compactMap { updates[$0]?.pointee }
            session.updatedReferences = all.filter { ObjectID($0.src) != ObjectID($0.dst) }.count
            // libgit2 names a ref the remote lacks with the zero id.
            session.moved = all.compactMap { update in
                let name = String(cString: update.dst_refname)
                guard let expected = session.expected[name] else { return nil }
                let advertised = ObjectID(update.src)
                return advertised == (expected ?? ObjectID(bytes: ArraySlice(repeating: 0, count: 20))) ? nil : name
            }
            return session.moved.isEmpty ? 0 : GIT_EUSER.rawValue
        }
        callbacks.push_update_reference = { name, status, payload in
            if let name, let status, let session = TransferSession.from(payload) {
                session.refused.append("\(String(cString: name)): \(String(cString: status))")
            }
            return 0
        }
        return callbacks
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
