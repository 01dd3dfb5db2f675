import Foundation

/// Reviewing what automatic resolutions dropped, and bringing a dropped value back.
extension DocumentStore {
    /// The automatic resolutions after `token` (of `key`, by `resolver`, when given), oldest first, with what each
    /// kept and dropped, and the token to ask from next time.
    ///
    /// Reads the change journal from its newest entry back to `token`, as
    /// `changes(since:)` does, so the cost follows the changes since the token,
    /// not the store; resolutions a sync brought are listed like this store's
    /// own. A person's resolutions are not listed. A resolution's decisions
    /// are read from its commit and checked against the heads it settled: a
    /// replica that wrote them malformed gets a ``ReviewedResolution/problem``,
    /// never a value to restore. Each dropped value says whether a later
    /// version restored it (``DroppedValue/restoredBy``).
    public func review(_ key: DocumentKey? = nil, since token: ChangeHistory.Token = .beginning, resolver: String? = nil) throws(TruceError)
        -> ResolutionReview
    {
        try access.read { try $0.review(key, since: token, resolver: resolver) }
    }

    /// Brings `dropped` back as a new version of its document, based on the current version; nil when the current
    /// version already holds it (nothing is written).
    ///
    /// The value is checked against the resolution's commit, not taken from
    /// `dropped`: the resolution must have recorded dropping that head's value
    /// at that place. A value of the whole document comes back as the dropped
    /// head's content (a dropped deletion deletes the document again). A value
    /// at a place is put back by the resolver that dropped it, which must be a
    /// ``RestoringResolver`` in the store's resolvers (or `registry`), run
    /// under its timeout with its options from config; its output passes the
    /// same validation as a resolution's. The new version is a save by
    /// `device`, dated now, whose message names what it restores
    /// (`Restores-Dropped: <resolution> <version> "<place>"`), so every
    /// replica's `review` shows the value restored. When another writer saved
    /// meanwhile, it lands beside that version and the document is in
    /// conflict, as a save does.
    @discardableResult
    public func restore(_ dropped: DroppedValue, registry: ResolverRegistry? = nil, device: String? = nil) async throws(TruceError)
        -> SaveResult?
    {
        try await Restoring(resolving: resolving(registry)).restore(dropped, author: author(device))
    }
}
