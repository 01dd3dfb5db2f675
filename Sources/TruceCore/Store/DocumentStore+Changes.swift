import Foundation

/// The store's history of changes: since a token, by whom, and as they happen.
extension DocumentStore {
    /// Every change after `token`, oldest first, optionally without those made by `excludedAuthor`.
    ///
    /// Reads the journal from its newest entry back to `token`: the cost
    /// grows with the number of changes since the token, not with the store.
    public func changes(since token: ChangeHistory.Token = .beginning, excludingAuthor excludedAuthor: String? = nil) throws(TruceError)
        -> ChangeHistory
    {
        try access.read { try $0.changes(since: token, excludingAuthor: excludedAuthor) }
    }

    /// Who made each resolution of `versions` in this store, as the change journal recorded it.
    ///
    /// A resolution's commit names its resolver, not who ran it (so that
    /// replicas agree on its id); the journal keeps the device. The walk goes
    /// back from the newest entry only as far as the oldest resolution's date:
    /// its entry cannot be older than that.
    public func resolutionAuthors(of versions: [Version]) throws(TruceError) -> [VersionID: String] {
        try access.read { try $0.resolutionAuthors(of: versions) }
    }

    /// Every save, deletion and resolution as it happens, from any writer, with the state it moved the document between.
    ///
    /// Each access starts a new sequence that sees the changes recorded in
    /// the change journal after it. Writers are this object, another
    /// `DocumentStore` on the same path, another process, or a `sync` that
    /// brings versions in from either side: all of them record their changes
    /// in the journal, and the sequence reads the journal from the last
    /// position it delivered whenever the store's references move (inotify
    /// on Linux, dispatch sources on macOS). So nothing is delivered twice,
    /// and a change this object makes is delivered before the call that made
    /// it returns. The watching stops when the last sequence ends or the
    /// store is released, which also ends the sequences.
    public var events: AsyncStream<DocumentStateChange> { access.events }
}
