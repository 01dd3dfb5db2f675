import Foundation

/// The answers people gave, recorded and replayed: git's rerere, shared with every replica by sync.
extension DocumentStore {
    /// The resolver name a resolution by recorded answers records in `Resolved-By:`.
    public static let recordedAnswerResolverName = "recorded-answer"

    /// Every recorded answer the store holds, oldest first.
    public func recordedAnswers() throws(TruceError) -> [RecordedAnswer] {
        var records: [RecordedAnswer] = []
        for key in try documents() where key.rawValue.hasPrefix(".truce/answers/") {
            if let record = try record(at: key) { records.append(record) }
        }
        return records.sorted { ($0.recordedAt, $0.id) < ($1.recordedAt, $1.id) }
    }

    /// The recorded answers that apply to `key`'s conflict as it stands: one for the whole document, or one per point;
    /// none when the document is not in conflict.
    public func recordedAnswers(for key: DocumentKey) async throws(TruceError) -> [RecordedAnswer] {
        guard try state(of: key) == .inConflict else { return [] }
        let conflict = try contestedConflictSet(of: key)
        let chain = try chain(for: key, registry: resolvers)
        let found = try await matchingRecords(for: conflict, chain: chain)
        return (found.document.map { [$0] } ?? []) + found.points.values.sorted { $0.id < $1.id }
    }

    /// Forgets the recorded answers that apply to `key`'s conflict (git's `rerere forget`); returns their ids.
    @discardableResult
    public func forgetRecordedAnswers(for key: DocumentKey, device: String? = nil) async throws(TruceError) -> [String] {
        let ids = try await recordedAnswers(for: key).map(\.id)
        for id in ids { try forgetRecordedAnswer(id, device: device) }
        return ids
    }

    /// Forgets the recorded answer `id` (or the one whose id starts with it, at least 4 digits): its document is
    /// deleted, on every replica after sync.
    public func forgetRecordedAnswer(_ id: String, device: String? = nil) throws(TruceError) {
        let matches = try recordedAnswers().filter { $0.id.hasPrefix(id.lowercased()) }
        guard id.utf8.count >= 4, let record = matches.first else { throw .invalidAnswer("no recorded answer has the id \(id)") }
        guard matches.count == 1 else { throw .invalidAnswer("\(id) names \(matches.count) recorded answers; give more digits") }
        try delete(RecordedAnswer.key(of: record.id), device: device)
    }

    /// Forgets the recorded answers older than the store's limits, as `git rerere gc` does: `gc.rerereResolved` days
    /// for answers (default 60), `gc.rerereUnresolved` days for records without one (default 15); returns their ids.
    @discardableResult
    public func collectRecordedAnswers(now: Date = Date(), device: String? = nil) throws(TruceError) -> [String] {
        let config = try withEngine { try $0.routedConfig() }
        func days(_ name: String, _ fallback: Double) throws(TruceError) -> Double {
            guard let text = config[name.lowercased()] else { return fallback }
            guard let value = Double(text), value >= 0 else { throw .invalidConfiguration("\(name) = \(text): expected a number of days") }
            return value
        }
        let resolved = try days("gc.rerereResolved", 60), unresolved = try days("gc.rerereUnresolved", 15)
        var collected: [String] = []
        for record in try recordedAnswers() {
            let limit = record.postimage == nil && record.scope == .document ? unresolved : resolved
            guard now.timeIntervalSince(record.recordedAt) > limit * 86_400 else { continue }
            try delete(RecordedAnswer.key(of: record.id), device: device)
            collected.append(record.id)
        }
        return collected
    }

    // MARK: - Replay

    /// The records that answer `conflict` (the contested set) exactly, as `chain` sees its points.
    func matchingRecords(for conflict: ConflictSet, chain: ResolverChain) async throws(TruceError) -> AnswerReplay {
        try await AnswerReplay.matching(conflict, chain: chain) { [self] (ids: [String]) throws(TruceError) in
            try withEngine { try $0.recordedAnswers(withIDs: ids) }
        }
    }

    /// The content recorded answers make of `conflict`, when they answer all of it and replay is on; nil otherwise.
    func replay(_ conflict: ConflictSet, chain: ResolverChain) async throws(TruceError) -> (content: Data?, records: [RecordedAnswer])? {
        guard try isReplaying() else { return nil }
        return try await matchingRecords(for: conflict, chain: chain).replayed(on: conflict, chain: chain)
    }

    /// Whether recorded answers are replayed: `rerere.enabled` in the store's config or the synced one, on by default.
    func isReplaying() throws(TruceError) -> Bool {
        guard let text = try withEngine({ try $0.routedConfig() })["rerere.enabled"] else { return true }
        switch text.lowercased() {
        case "true", "yes", "on", "1": return true
        case "false", "no", "off", "0": return false
        default: throw .invalidConfiguration("rerere.enabled = \(text): expected true or false")
        }
    }

    /// The record the document `key` holds; nil when there is none, it is deleted, or it is not a record.
    func record(at key: DocumentKey) throws(TruceError) -> RecordedAnswer? {
        try withEngine { try $0.recordedAnswer(at: key) }
    }
}
