import Foundation
internal import TruceGit

/// The answers people gave, recorded as `.truce/answers/<id>.json` documents that sync like any other, and replayed:
/// git's rerere.
///
/// The policy lives here: which records apply to a conflict as it stands,
/// whether replay is on (`rerere.enabled`), and which records `gc` forgets
/// (`gc.rerereResolved` and `gc.rerereUnresolved`, read as git reads them).
struct RecordedAnswerBook: Sendable {
    let access: StoreAccess
    /// How the conflicts the records answer are read and seen by their chains.
    let resolving: Resolving

    /// How many days `gc` keeps a record that holds an answer, unless `gc.rerereResolved` says (git's default).
    static let defaultResolvedDays = 60.0
    /// How many days `gc` keeps a record without an answer, unless `gc.rerereUnresolved` says (git's default).
    static let defaultUnresolvedDays = 15.0

    /// Every recorded answer the store holds, oldest first.
    func all() throws(TruceError) -> [RecordedAnswer] {
        try access.read { session in
            try session.documents().filter(\.isRecordedAnswer).compactMap { try session.recordedAnswer(at: $0) }
        }.sorted { ($0.recordedAt, $0.id) < ($1.recordedAt, $1.id) }
    }

    /// The recorded answers that apply to `key`'s conflict as it stands: one for the whole document, or one per point;
    /// none when the document is not in conflict.
    func applying(to key: DocumentKey) async throws(TruceError) -> [RecordedAnswer] {
        guard try access.read({ try $0.versions(of: key).state }) == .inConflict else { return [] }
        let conflict = try resolving.contestedConflictSet(of: key)
        let found = try await matching(conflict, chain: resolving.chain(for: key))
        return (found.document.map { [$0] } ?? []) + found.points.values.sorted { $0.id < $1.id }
    }

    /// Forgets the recorded answers that apply to `key`'s conflict (git's `rerere forget`); returns their ids.
    func forget(answersTo key: DocumentKey, device: String) async throws(TruceError) -> [String] {
        let ids = try await applying(to: key).map(\.id)
        for id in ids { try forget(id, device: device) }
        return ids
    }

    /// Forgets the recorded answer `id` (or the one whose id starts with it, at least 4 digits): its document is
    /// deleted, on every replica after sync.
    func forget(_ id: String, device: String) throws(TruceError) {
        let matches = try all().filter { $0.id.hasPrefix(id.lowercased()) }
        guard id.utf8.count >= 4, let record = matches.first else { throw .invalidAnswer("no recorded answer has the id \(id)") }
        guard matches.count == 1 else { throw .invalidAnswer("\(id) names \(matches.count) recorded answers; give more digits") }
        _ = try access.save(nil, to: RecordedAnswer.key(of: record.id), base: nil, author: device, date: Date())
    }

    /// Forgets the records older than the store's limits, as `git rerere gc` does; returns their ids.
    ///
    /// A record that holds an answer (a postimage, or a point's answer) is kept for `gc.rerereResolved` days; one
    /// without (a whole-document record of a conflict nobody answered) for `gc.rerereUnresolved` days.
    func collect(now: Date, device: String) throws(TruceError) -> [String] {
        let config = try access.read { try $0.routedConfig() }
        let resolved = try Self.days(config, "gc.rerereResolved", default: Self.defaultResolvedDays)
        let unresolved = try Self.days(config, "gc.rerereUnresolved", default: Self.defaultUnresolvedDays)
        var collected: [String] = []
        for record in try all() {
            let limit = record.isUnresolved ? unresolved : resolved
            guard now.timeIntervalSince(record.recordedAt) > limit * 86_400 else { continue }
            _ = try access.save(nil, to: RecordedAnswer.key(of: record.id), base: nil, author: device, date: Date())
            collected.append(record.id)
        }
        return collected
    }

    /// A number of days config gives `name` (as git names it, any case), else `fallback`.
    private static func days(_ config: [String: String], _ name: String, default fallback: Double) throws(TruceError) -> Double {
        guard let text = config[name.lowercased()] else { return fallback }
        guard let value = Double(text), value >= 0 else { throw .invalidConfiguration("\(name) = \(text): expected a number of days") }
        return value
    }

    // MARK: - Replay

    /// The records that answer `conflict` (the contested set) exactly, as `chain` sees its points; with `lookup`, ids
    /// that call looked up before are not read again.
    func matching(_ conflict: ConflictSet, chain: ResolverChain, lookup: RecordedAnswerLookup? = nil) async throws(TruceError) -> AnswerReplay {
        try await AnswerReplay.matching(conflict, chain: chain) { [access] (ids: [String]) throws(TruceError) in
            func read(_ ids: [String]) throws(TruceError) -> [String: RecordedAnswer] {
                try access.read { try $0.recordedAnswers(withIDs: ids) }
            }
            guard let lookup else { return try read(ids) }
            return try lookup.records(withIDs: ids, reading: read)
        }
    }

    /// Whether `config` (the store's with the synced one over it) replays recorded answers: `rerere.enabled`, on by
    /// default, read as git reads a boolean.
    static func isReplaying(_ config: [String: String]) throws(TruceError) -> Bool {
        guard let text = config["rerere.enabled"] else { return true }
        guard let value = ConfigEntry.boolean(text) else { throw .invalidConfiguration("rerere.enabled = \(text): expected true or false") }
        return value
    }
}

extension DocumentKey {
    /// True for the documents that hold recorded answers (`.truce/answers/…`).
    var isRecordedAnswer: Bool { rawValue.hasPrefix(".truce/answers/") }
}

extension RecordedAnswer {
    /// A record of a whole conflict that nobody answered yet: `gc` keeps it for the shorter time.
    var isUnresolved: Bool { postimage == nil && scope == .document }
}
