import Foundation
internal import TruceGit

/// Reading the change journal for a session: the changes since a token, who made each resolution, the resolutions to
/// review.
///
/// The journal is git's record of what landed. Saves still in the save log
/// are listed after the journal's changes, in the log's order, and the token
/// returned names the last of them (`loggedMark`): once they land, the
/// journal entry holding them lists them again, and a read from that token
/// skips them there. So every change is listed once, whether it was read
/// from the log or from the journal.
extension ReadSession {
    /// Every change after `token`, oldest first, without those by `excludedAuthor` (compared as bytes), and the token
    /// that stands after them.
    func changes(since token: ChangeHistory.Token, excludingAuthor excludedAuthor: String?) throws -> ChangeHistory {
        let (changes, next) = try journalChanges(since: token)
        // By bytes: a device named in NFD is not the one named in NFC, as git sees them.
        let excluded = excludedAuthor.map { Array($0.utf8) }
        return ChangeHistory(changes: changes.filter { Array($0.author.utf8) != excluded }, token: next)
    }

    /// The changes after `token` (the journal's, then the save log's) and the token after them; an invalid token is
    /// `TruceError.invalidToken`.
    func journalChanges(since token: ChangeHistory.Token) throws -> (changes: [Change], token: ChangeHistory.Token) {
        var entries: [[Change]] = []
        let tip = try repository.reference(ChangeJournal.reference)
        if let tip {
            guard let read = try ChangeJournal(repository: repository).changesByEntry(from: tip, after: token.entry) else {
                throw TruceError.invalidToken(token.description, reason: "it is not a position in this store's change history")
            }
            entries = read
        } else if token.entry != nil {
            throw TruceError.invalidToken(token.description, reason: "this store has no changes yet")
        }
        var logged = overlay?.pendingChanges ?? []
        var stillLogged: VersionID?
        if let mark = token.loggedMark {
            // Listed from the log before: skipped where they landed, or in the log while they are still there.
            if let entry = entries.firstIndex(where: { $0.contains { $0.version == mark } }) {
                entries[entry].removeFirst(entries[entry].firstIndex { $0.version == mark }! + 1)
            } else {
                if let index = logged.firstIndex(where: { $0.version == mark }) { logged.removeFirst(index + 1) }
                stillLogged = mark
            }
        }
        let next = ChangeHistory.Token(entry: tip, loggedMark: logged.last?.version ?? stillLogged)
        return (entries.flatMap { $0 } + logged, next)
    }

    /// Who made each resolution of `versions` in this store, as the change journal recorded it; the walk goes back
    /// only as far as the oldest resolution's date.
    func resolutionAuthors(of versions: [Version]) throws -> [VersionID: String] {
        let resolutions = versions.filter(\.isResolution)
        guard let oldest = resolutions.map(\.modificationDate).min() else { return [:] }
        var wanted = Set(resolutions.map(\.id))
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

    /// The automatic resolutions after `token` (of `key`, by `resolver`, when given), oldest first, with what each kept
    /// and dropped, and the token to ask from next time.
    func review(_ key: DocumentKey?, since token: ChangeHistory.Token, resolver: String?) throws -> ResolutionReview {
        guard let tip = try repository.reference(ChangeJournal.reference) else {
            guard token.entry == nil else { throw TruceError.invalidToken(token.description, reason: "this store has no changes yet") }
            return ResolutionReview(resolutions: [], token: token)
        }
        guard let resolutions = try engine.review(key: key, resolver: resolver, from: tip, after: token.entry) else {
            throw TruceError.invalidToken(token.description, reason: "it is not a position in this store's change history")
        }
        // Resolutions never go through the save log: the token stands at the journal's tip.
        return ResolutionReview(resolutions: resolutions, token: ChangeHistory.Token(entry: tip))
    }
}
