import Foundation
internal import TruceGit

/// A sync with another store or a hub: the exchange on an engine of its own, then, when asked, the resolving of what
/// stays in conflict and a second send of those resolutions, in the same call.
///
/// What the transfer takes from the machine (keys, known hosts, CAs,
/// passwords) is `environment`'s alone: the store's, given at open, unless
/// the call gave another.
struct Syncing: Sendable {
    let resolving: Resolving
    let environment: SyncEnvironment

    init(resolving: Resolving, environment: SyncEnvironment, overriddenBy given: SyncEnvironment? = nil) {
        self.resolving = resolving
        self.environment = given ?? environment
    }

    var access: StoreAccess { resolving.access }

    /// Exchanges versions with `remote`; with `device`, settles what stays in conflict by the resolvers that decide on
    /// their own, as `device`, and sends those resolutions back.
    func sync(with remote: String, resolvingAs device: String?, progress: (@Sendable (SyncReport.Traffic) -> Void)?) async throws(TruceError)
        -> SyncReport
    {
        let session = try await BlockingExecutor.run { [self] (cancellation) throws(TruceError) -> SyncSession in
            try exchange(with: remote, progress: progress, cancellation: cancellation)
        }
        guard let device else { return try report(of: session, resolved: [], needsPerson: []) }
        var resolved: [DocumentKey] = [], needsPerson: [DocumentKey] = []
        let results = try await resolving.resolveAll(nil, resolverName: nil, device: device, progress: nil)
        for (key, result) in results.sorted(by: { $0.key < $1.key }) {
            if case .resolved = result { resolved.append(key) } else { needsPerson.append(key) }
        }
        if !resolved.isEmpty {
            try await BlockingExecutor.run { (cancellation) throws(TruceError) in try session.send(cancellation: cancellation) }
        }
        return try report(of: session, resolved: resolved, needsPerson: needsPerson)
    }

    /// Syncs with `remote`, then takes `replica`'s manifest off it (`SyncSession.forget`); returns the sync's report.
    func forget(_ replica: String, on remote: String) async throws(TruceError) -> SyncReport {
        guard ReplicaManifest.isReplicaID(replica) else {
            throw .invalidRemote(remote, reason: "'\(replica)' is not a replica id (32 lowercase hex digits, as 'truce replicas' prints them)")
        }
        let session = try await BlockingExecutor.run { [self] (cancellation) throws(TruceError) -> SyncSession in
            if try access.read({ EncryptedHubCache.isEncrypted(remote, in: $0.repository) }) {
                // Its replicas' chains are sealed entries that every device checks against what it read before: one
                // that vanished reads as a hub withholding it.
                throw .invalidRemote(
                    remote, reason: "it is an encrypted hub, which keeps every replica's entries: forgetting one is not supported there")
            }
            let session = try exchange(with: remote, progress: nil, cancellation: cancellation)
            _ = try session.forget(replica, cancellation: cancellation)
            return session
        }
        return try report(of: session, resolved: [], needsPerson: [])
    }

    /// A sync on the calling thread, without resolving.
    func syncOnCallingThread(with remote: String) throws(TruceError) -> SyncReport {
        try report(of: exchange(with: remote, progress: nil, cancellation: nil), resolved: [], needsPerson: [])
    }

    /// The exchange of a sync on the calling thread: a session on an engine of its own, its receive and its send.
    private func exchange(
        with remote: String, progress: (@Sendable (SyncReport.Traffic) -> Void)?, cancellation: Cancellation?
    ) throws(TruceError) -> SyncSession {
        let session = try access.withOwnEngine { engine throws -> SyncSession in
            let session =
                EncryptedHubCache.isEncrypted(remote, in: engine.repository)
                ? try engine.encryptedSyncSession(remote, environment: environment, progress: progress, cancellation: cancellation)
                : try SyncSession(remote: remote, engine: engine, environment: environment.transfer, progress: progress)
            try session.exchange(cancellation: cancellation)
            return session
        }
        access.deliverEvents()
        return session
    }

    private func report(of session: SyncSession, resolved: [DocumentKey], needsPerson: [DocumentKey]) throws(TruceError) -> SyncReport {
        session.report(inConflict: try access.read { try $0.documentsInConflict().map(\.key) }, resolved: resolved, needsPerson: needsPerson)
    }
}

extension SyncEnvironment {
    /// The git layer's form of this value, which its transfers take instead of reading the process.
    var transfer: TransferEnvironment {
        TransferEnvironment(
            homeDirectory: homeDirectory, knownHostsFile: knownHostsFile, loginName: loginName, sshAgentSocket: sshAgentSocket,
            certificateAuthorityFile: certificateAuthorityFile, httpUser: httpUser, httpPassword: httpPassword,
            credentialHelperEnvironment: credentialHelperEnvironment, namesVariables: readFromProcess)
    }
}
