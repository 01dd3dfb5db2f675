import Foundation
internal import TruceGit

/// The store's history of changes: since a token, by whom, and as they happen.
extension DocumentStore {
    /// Every change after `token`, oldest first, optionally without those made by `excludedAuthor`.
    ///
    /// Reads the journal from its newest entry back to `token`: the cost
    /// grows with the number of changes since the token, not with the store.
    public func changes(since token: ChangeHistory.Token = .beginning, excludingAuthor excludedAuthor: String? = nil) throws(TruceError)
        -> ChangeHistory
    {
        try withEngine { engine in
            let repository = engine.repository
            guard let tip = try repository.reference(ChangeJournal.reference) else {
                guard token == .beginning else { throw TruceError.invalidToken(token.description, reason: "this store has no changes yet") }
                return ChangeHistory(changes: [], token: .beginning)
            }
            guard let changes = try ChangeJournal(repository: repository).changes(from: tip, after: token.entry) else {
                throw TruceError.invalidToken(token.description, reason: "it is not a position in this store's change history")
            }
            // By bytes: a device named in NFD is not the one named in NFC, as git sees them.
            let excluded = excludedAuthor.map { Array($0.utf8) }
            return ChangeHistory(changes: changes.filter { Array($0.author.utf8) != excluded }, token: ChangeHistory.Token(entry: tip))
        }
    }

    /// Who made each resolution of `versions` in this store, as the change journal recorded it.
    ///
    /// A resolution's commit names its resolver, not who ran it (so that
    /// replicas agree on its id); the journal keeps the device. The walk goes
    /// back from the newest entry only as far as the oldest resolution's date:
    /// its entry cannot be older than that.
    public func resolutionAuthors(of versions: [Version]) throws(TruceError) -> [VersionID: String] {
        let resolutions = versions.filter(\.isResolution)
        guard let oldest = resolutions.map(\.modificationDate).min() else { return [:] }
        var wanted = Set(resolutions.map(\.id))
        return try withEngine { engine in
            let repository = engine.repository
            let journal = ChangeJournal(repository: repository)
            var authors: [VersionID: String] = [:]
            var entry = try repository.reference(ChangeJournal.reference)
            while let current = entry, !wanted.isEmpty {
                let commit = try repository.readCommit(current)
                if commit.committer.time < Int64(oldest.timeIntervalSince1970) { break }
                for change in try journal.recorded(in: commit)?.map(\.change) ?? []
                where change.kind == .resolution && wanted.remove(change.version) != nil {
                    authors[change.version] = change.author
                }
                entry = commit.parents.first
            }
            return authors
        }
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
    public var events: AsyncStream<DocumentStateChange> { eventHub.subscribe(to: self) }

    /// Delivers this object's own changes to its `events` before the write returns, rather than on the watcher's next wake-up.
    func deliverEvents() { eventHub.deliver(from: self) }
}
