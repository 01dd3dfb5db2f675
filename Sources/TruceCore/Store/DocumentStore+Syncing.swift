import Foundation

/// Exchanging versions with another store or a hub.
extension DocumentStore {
    /// Exchanges versions with another store (a path, `file://`, git://, ssh or http(s) URL), off the calling task's
    /// thread; with `resolving`, settles what stays in conflict with the resolvers that decide on their own and sends
    /// those resolutions back in the same call.
    ///
    /// Heads are unioned and heads another head descends from drop out, so a
    /// resolution made on either side settles the conflict on both, and the
    /// current version is the same everywhere. Only version refs travel: no
    /// config, attributes or driver comes from the other side.
    ///
    /// Resolutions are a function of the heads they settle, so when the other
    /// replica resolves the same conflict it writes the same commit:
    /// resolving after every sync converges. What needs a person is left as it
    /// is and reported in `needsPerson`. The resolvers are the store's
    /// (`resolvers`), or `registry` when given. `progress` hears the running
    /// traffic, for a progress line.
    ///
    /// Cancelling the task stops it with `TruceError.cancelled`: during the
    /// download (libgit2's progress callback aborts the transfer) or before
    /// adopting, either way with nothing adopted and the store as it was.
    /// Once adopting has begun it runs to the end (the journal and the heads
    /// land whole); a cancellation then stops the send or the resolving that
    /// follows, and keeps what was adopted.
    ///
    /// Over ssh and http(s) the sync uses only what `environment` carries
    /// (ssh keys and known hosts, an ssh-agent, a CA file, a password, git's
    /// credential helpers): the ``SyncEnvironment`` the store was opened with
    /// (`syncEnvironment:`, `.empty` unless given) when it is nil. The library
    /// reads no environment variable; <doc:Syncing> says what to give.
    public func sync(
        with remote: String, resolving: Bool = false, registry: ResolverRegistry? = nil, device: String? = nil,
        environment: SyncEnvironment? = nil, progress: (@Sendable (SyncReport.Traffic) -> Void)? = nil
    ) async throws(TruceError) -> SyncReport {
        // Checked before anything moves: the device is used only when resolving, but a bad one fails at once.
        try await Syncing(resolving: self.resolving(registry), environment: syncEnvironment, overriddenBy: environment)
            .sync(with: remote, resolvingAs: resolving ? author(device) : nil, progress: progress)
    }

    /// A sync on the calling thread, for the package's own synchronous callers (a test fixture's store).
    package func syncOnCallingThread(with remote: String) throws(TruceError) -> SyncReport {
        try Syncing(resolving: resolving(), environment: syncEnvironment).syncOnCallingThread(with: remote)
    }

    /// Every replica this store knows of, the one that published most recently first: this store, and each other
    /// replica whose manifest a sync brought from a hub, with how many manifests it published and when it published
    /// its newest, by its own clock.
    ///
    /// It reads the store, not the hub: the list is as of this store's last
    /// sync. A replica appears once it has synced with a hub this store syncs
    /// with (through another hub too, when a replica passes it on).
    public func replicas() throws(TruceError) -> [ReplicaSummary] {
        try access.read { try $0.replicas() }
    }

    /// Takes a retired replica off the hub at `remote`: syncs with it, then writes the hub's index without the
    /// replica's manifest (and removes its manifest ref, on a hub from before the index), so that no replica reads it
    /// again; returns the sync's report.
    ///
    /// Nothing is lost: it is refused, and the hub left as it was, unless
    /// the manifests the hub keeps (this store's, just sent, among them) reach
    /// every version the retired replica listed, which the sync before it
    /// makes true for every version this store adopted. A replica that comes
    /// back publishes its manifest again, as a new one would, and loses
    /// nothing it holds. Other stores no longer read it from the hub, but
    /// keep their copy (``replicas()`` lists it) until they forget it too,
    /// which then drops only that copy. The index moves only from the value
    /// this sync read: should another replica push meanwhile, forgetting is
    /// refused, to be run again. On a hub from before the index, the removal
    /// of the ref over a remote URL is git's push of a deletion, which does
    /// not wait for a replica pushing at that moment: a replica whose new
    /// manifest was removed pushes it again at its next sync.
    public func forgetReplica(_ id: String, on remote: String, environment: SyncEnvironment? = nil) async throws(TruceError) -> SyncReport {
        try await Syncing(resolving: resolving(nil), environment: syncEnvironment, overriddenBy: environment).forget(id, on: remote)
    }
}
