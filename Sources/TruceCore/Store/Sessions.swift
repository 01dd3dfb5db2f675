import Foundation

/// A person resolving: a session an app's UI drives, committed as the same answers through `resolve(_:answering:)`
/// would be, or parked to go on later, here or on another device.
extension DocumentStore {
    /// A session in which a person settles `key`'s conflict, continuing the one parked for it, if any.
    ///
    /// The points are those `conflictPoints(for:)` lists: line hunks, or the
    /// places a structured resolver names. A parked session's answers come
    /// back matched to the points by content; when new versions arrived since
    /// it was parked, `resumption` says so and what was kept. A document that
    /// is not in conflict is `TruceError.notInConflict`.
    public func resolutionSession(for key: DocumentKey, registry: ResolverRegistry? = nil) async throws(TruceError) -> ResolutionSession {
        let conflict = try contestedConflictSet(of: key)
        let chain = try chain(for: key, registry: registry ?? resolvers)
        let answering = try await BlockingExecutor.preferring { () async throws(TruceError) in try await chain.answeringResolver(for: conflict) }
        let analysis = answering == nil ? try ConflictAnalysis(conflict) : nil
        let points = answering?.points ?? analysis!.points
        let heads = conflict.heads.map(\.version)
        var answers: [String: HunkAnswer] = [:]
        var resumption: ResolutionSession.Resumption?
        if let parked = try parkedSession(for: key) { (answers, resumption) = parked.answers(for: points, heads: heads) }
        // What people answered before to the same points comes back as answers given, each shown with its record.
        var recalled: [String: RecordedAnswer] = [:]
        if try isReplaying() {
            for (id, record) in try await matchingRecords(for: conflict, chain: chain).points where answers[id] == nil {
                guard let postimage = record.postimage else { continue }
                answers[id] = .text(postimage)
                recalled[id] = record
            }
        }
        return ResolutionSession(
            key: key, conflict: conflict, base: conflict.base?.version, points: points, chain: chain, analysis: analysis, answers: answers,
            resumption: resumption, recalled: recalled)
    }

    /// Writes the resolution the session's answers make: exactly the commit `resolve(_:answering:)` writes for them,
    /// after output validation; then forgets the parked session, if any.
    ///
    /// A session with points still open, or whose document got new versions
    /// since it began, is `TruceError.invalidAnswer` and writes nothing:
    /// start it again (`resolutionSession(for:)` keeps the answers whose
    /// points remain).
    @discardableResult
    public func commit(_ session: ResolutionSession, device: String? = nil) async throws(TruceError) -> ResolveResult {
        let device = try author(device)
        guard session.isComplete else {
            throw .invalidAnswer("\(session.remaining) of the \(session.points.count) conflict points of \(session.key) have no answer")
        }
        let conflict = try conflictSet(of: session.key)
        guard try contested(conflict).heads.map(\.version.id) == session.heads.map(\.id) else {
            throw .invalidAnswer(
                "new versions of \(session.key) arrived since the session began; start it again (the answers whose points remain are kept)")
        }
        let result = try await resolve(conflict, answers: session.answers, chain: session.chain, device: device)
        if try parkedSession(for: session.key) != nil { try? discardParkedSession(for: session.key, device: device) }
        return result
    }

    /// Puts the session aside with the answers given so far: they are saved as the document
    /// `.truce/sessions/<key hash>.json`, which syncs like any other, and `resolutionSession(for:)` continues from them,
    /// on this device or another. Returns the version written.
    @discardableResult
    public func park(_ session: ResolutionSession, device: String? = nil, date: Date = Date()) throws(TruceError) -> Version {
        let device = try author(device)
        let parked = try ParkedSession(session, device: device, date: date)
        return try save(parked.encoded, to: ParkedSession.key(for: session.key), device: device, date: date).version
    }

    /// Forgets the session parked for `key`, if any (its document is deleted; history keeps it).
    public func discardParkedSession(for key: DocumentKey, device: String? = nil) throws(TruceError) {
        let parkedKey = ParkedSession.key(for: key)
        guard try state(of: parkedKey) == .settled else { return }
        try delete(parkedKey, device: device)
    }

    /// The session parked for `key`; nil when none is, or its document is not one this Truce reads.
    func parkedSession(for key: DocumentKey) throws(TruceError) -> ParkedSession? {
        let parkedKey = ParkedSession.key(for: key)
        guard let current = try currentVersion(of: parkedKey), !current.isDeletion, let data = try contents(of: current) else { return nil }
        return ParkedSession(decoding: data)
    }
}
