import Foundation

/// A person resolving over time: a session an app's UI drives, continued from where it was parked (here or on another
/// device) and offered the answers people gave before, committed as the same answers through `Resolving` would be.
struct PersonResolving: Sendable {
    let resolving: Resolving

    var access: StoreAccess { resolving.access }

    /// A session in which a person settles `key`'s conflict, continuing the one parked for it, if any.
    func session(for key: DocumentKey) async throws(TruceError) -> ResolutionSession {
        let read = try resolving.read(key)
        let config = read.routing.routedConfig
        let conflict = try resolving.contested(read.conflict, config: config)
        let chain = resolving.chain(try resolving.resolverChoice(for: key, routing: read.routing))
        let answering = try await BlockingExecutor.preferring { () async throws(TruceError) in try await chain.answeringResolver(for: conflict) }
        let analysis = answering == nil ? try ConflictAnalysis(conflict) : nil
        let points = answering?.points ?? analysis!.points
        var answers: [String: HunkAnswer] = [:]
        var resumption: ResolutionSession.Resumption?
        if let parked = try parkedSession(for: key) {
            (answers, resumption) = parked.answers(for: points, heads: conflict.heads.map(\.version))
        }
        // What people answered before to the same points comes back as answers given, each shown with its record.
        var recalled: [String: RecordedAnswer] = [:]
        let book = RecordedAnswerBook(access: access, resolving: resolving)
        if try RecordedAnswerBook.isReplaying(config) {
            for (id, record) in try await book.matching(conflict, chain: chain).points where answers[id] == nil {
                guard let postimage = record.postimage else { continue }
                answers[id] = .text(postimage)
                recalled[id] = record
            }
        }
        return ResolutionSession(
            key: key, conflict: conflict, base: conflict.base?.version, points: points, chain: chain, analysis: analysis, answers: answers,
            resumption: resumption, recalled: recalled)
    }

    /// Writes the resolution the session's answers make, then forgets the parked session, if any; refuses a session
    /// with points still open or whose document got new versions since it began.
    func commit(_ session: ResolutionSession, device: String) async throws(TruceError) -> ResolveResult {
        guard session.isComplete else {
            throw .invalidAnswer("\(session.remaining) of the \(session.points.count) conflict points of \(session.key) have no answer")
        }
        let conflict = try resolving.conflictSet(of: session.key)
        guard try resolving.contested(conflict).heads.map(\.version.id) == session.heads.map(\.id) else {
            throw .invalidAnswer(
                "new versions of \(session.key) arrived since the session began; start it again (the answers whose points remain are kept)")
        }
        let result = try await resolving.resolve(conflict, answers: session.answers, chain: session.chain, device: device)
        if try parkedSession(for: session.key) != nil { try? discardParkedSession(for: session.key, device: device) }
        return result
    }

    /// Saves the session's answers so far as the document `.truce/sessions/<key hash>.json`; returns the version written.
    func park(_ session: ResolutionSession, device: String, date: Date) throws(TruceError) -> Version {
        let parked = try ParkedSession(session, device: device, date: date)
        return try access.save(parked.encoded, to: ParkedSession.key(for: session.key), base: nil, author: device, date: date).version
    }

    /// Forgets the session parked for `key`, if any (its document is deleted; history keeps it).
    func discardParkedSession(for key: DocumentKey, device: String) throws(TruceError) {
        let parkedKey = ParkedSession.key(for: key)
        guard try access.read({ try $0.versions(of: parkedKey).state }) == .settled else { return }
        _ = try access.save(nil, to: parkedKey, base: nil, author: device, date: Date())
    }

    /// The session parked for `key`; nil when none is, or its document is not one this Truce reads.
    func parkedSession(for key: DocumentKey) throws(TruceError) -> ParkedSession? {
        try access.read { session in
            guard let current = try session.versions(of: ParkedSession.key(for: key)).current, !current.isDeletion,
                let data = try session.contents(of: current)
            else { return nil }
            return ParkedSession(decoding: data)
        }
    }
}
