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

    /// The records that answer `conflict` exactly: one for its whole image, and one per point of `chain`'s.
    func matchingRecords(for conflict: ConflictSet, chain: ResolverChain) async throws(TruceError)
        -> (document: RecordedAnswer?, points: [String: RecordedAnswer], all: [ConflictPoint])
    {
        var document: RecordedAnswer?
        if let image = try ConflictRecording.image(of: conflict), let id = image.id,
            let record = try record(at: RecordedAnswer.key(of: id)), record.scope == .document, record.answers(image.hunks)
        {
            document = record
        }
        let points = try await BlockingExecutor.preferring { () async throws(TruceError) in try await chain.conflictPoints(of: conflict) }
        var found: [String: RecordedAnswer] = [:]
        for point in points {
            guard let record = try record(at: RecordedAnswer.key(of: point.conflictID)), record.scope == .point,
                record.answers(ConflictRecording.hunk(of: point).hunks)
            else { continue }
            found[point.id] = record
        }
        return (document, found, points)
    }

    /// The content recorded answers make of `conflict`, when they answer all of it and replay is on; nil otherwise.
    ///
    /// A record of the whole document is replayed as git's rerere replays
    /// one (a three-way merge of its preimage, this conflict and its
    /// postimage); else, when every point has a record, their answers are
    /// given as a person's would be. The content is what the chain's own
    /// way of applying answers makes of them, so the same records give the
    /// same resolution on every replica.
    func replay(_ conflict: ConflictSet, chain: ResolverChain) async throws(TruceError) -> (content: Data?, records: [RecordedAnswer])? {
        guard try isReplaying() else { return nil }
        let found = try await matchingRecords(for: conflict, chain: chain)
        if let record = found.document, let image = try ConflictRecording.image(of: conflict) {
            guard let postimage = record.postimage else { return (nil, [record]) }
            if let content = try image.replaying(preimage: record.preimage, postimage: postimage) { return (content, [record]) }
        }
        guard !found.all.isEmpty, found.points.count == found.all.count else { return nil }
        var answers: [String: HunkAnswer] = [:]
        for point in found.all {
            let record = found.points[point.id]!
            if let postimage = record.postimage {
                answers[point.id] = .text(postimage)
            } else if let side = point.sides.first(where: { $0.text == nil }) {
                answers[point.id] = .version(side.version.hex)
            } else if point.base == nil, conflict.base != nil {
                answers[point.id] = .base
            } else {
                return nil
            }
        }
        let content = try await BlockingExecutor.preferring { () async throws(TruceError) in try await chain.applying(answers, to: conflict) }
        return (content, found.all.map { found.points[$0.id]! })
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
        guard let current = try currentVersion(of: key), !current.isDeletion, let data = try contents(of: current) else { return nil }
        let id = String(key.rawValue.dropFirst(".truce/answers/".count).dropLast(".json".count))
        return RecordedAnswer(decoding: data, id: id)
    }
}
