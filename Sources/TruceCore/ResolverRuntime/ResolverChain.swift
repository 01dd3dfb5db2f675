import Foundation

/// Runs a document's resolver chain against a conflict: the delete-conflict policy first, then each resolver in
/// turn, under its deadline, until one settles the conflict with output that passes `OutputValidation` or asks for a
/// person. Nothing here writes: the store writes what the chain decided.
struct ResolverChain: Sendable {
    /// What the delete-conflict policy and the resolver chain decide for a conflict, before anything is written.
    enum Decision: Sendable {
        /// Settled, with the content the resolution would hold (nil: a deletion).
        case settle(Settlement, content: Data?, resolver: String)
        case needsPerson([ConflictPoint], resolver: String, reasons: [String])
    }

    /// The chain config (or the call) picked, with each resolver's options and timeout.
    let choice: ResolverChoice
    /// The context the store gives each resolver of the chain: its options, the document's history, its deadline.
    let context: @Sendable (ConflictSet, ResolverOptions, ContinuousClock.Instant) -> ResolutionContext

    /// Runs the delete-conflict policy, then each resolver of the chain until one settles the conflict with output
    /// that passes `OutputValidation` or asks for a person; when none does, the conflict points.
    ///
    /// A resolver that throws, does not finish within its timeout, or keeps
    /// a version that is not a head, has failed: the chain goes on, and the
    /// failure is one of the reasons. When no later resolver settles the
    /// conflict or asks for a person, the first failure is thrown. A store
    /// that fails underneath (`isStoreProblem`), or a cancelled caller, ends
    /// the chain at once: no fallback settles around it.
    func decide(_ conflict: ConflictSet, reasons earlier: [String] = []) async throws(TruceError) -> Decision {
        let key = conflict.key
        let contested: ConflictSet
        switch try conflict.applying(choice.deleteConflict) {
        case .settled(let kept):
            let decisions = choice.deleteConflict.decision(on: conflict, keeping: kept).map { [$0] } ?? []
            return .settle(
                kept.map { .kept($0.version, decisions: decisions) } ?? .content(nil, decisions: decisions), content: kept?.content,
                resolver: choice.deleteConflict.rawValue)
        case .contested(let heads):
            contested = heads
        }
        // Under modify-wins with several edits the deletions are set aside here; the resolver decides the rest.
        let policyDecisions = choice.deleteConflict.decision(on: conflict, keeping: nil).map { [$0] } ?? []
        var reasons = earlier
        var ran: [String] = []
        var failure: TruceError?
        func failed(_ name: String, _ error: TruceError) {
            failure = failure ?? error
            let reason = if case .resolverFailed(_, let reason) = error { reason } else { error.errorDescription ?? "\(error)" }
            reasons.append("\(name): it failed: \(reason)")
        }
        for name in choice.chain {
            guard let resolver = choice.resolvers[name] else {
                guard let skipped = choice.skipped[name] else { throw .unknownResolver(name, source: choice.source) }
                reasons.append("\(name): \(skipped)")
                continue
            }
            ran.append(name)
            let outcome: ResolutionOutcome
            let recorded: [ResolutionDecision]
            do {
                let options = choice.options[name] ?? ResolverOptions(resolverName: name)
                (outcome, recorded) = try await Deadline.running(name, timeout: choice.timeout(of: name)) { [context] deadline in
                    let resolverContext = context(contested, options, deadline)
                    let outcome = try await resolver.resolve(contested, context: resolverContext)
                    return (outcome, resolverContext.closeDecisions())
                }
            } catch {
                if Self.isStoreProblem(error) { throw error }
                failed(name, error)
                continue
            }
            switch outcome {
            case .pass(let reason):
                reasons.append("\(name): \(reason)")
            case .needsPerson(let points):
                return .needsPerson(points, resolver: name, reasons: reasons)
            case .resolved(let content):
                if let content, let problem = OutputValidation.problem(with: content, for: key) {
                    reasons.append("\(name): its output is \(problem); nothing was written")
                    continue
                }
                return .settle(.content(content, decisions: policyDecisions + recorded), content: content, resolver: name)
            case .kept(let id):
                guard let kept = contested.heads.first(where: { $0.version.id == id }) else {
                    failed(name, .resolverFailed(name, reason: "it kept \(id.short), which is not a head of \(key)"))
                    continue
                }
                // Keeping one head drops the others whole: recorded for a resolver that records nothing itself.
                let keeping = recorded.isEmpty ? [ResolutionDecision.keeping(kept, of: contested)] : recorded
                return .settle(.kept(kept.version, decisions: policyDecisions + keeping), content: kept.content, resolver: name)
            }
        }
        if let failure { throw failure }
        return .needsPerson(try ConflictAnalysis(contested).points, resolver: ran.last ?? choice.chain.last ?? "", reasons: reasons)
    }

    /// The first resolver of the chain whose conflict points are its own (`PointAnsweringResolver`) and that applies
    /// to `conflict`, with its points; nil when none does.
    func answeringResolver(for conflict: ConflictSet) async throws(TruceError)
        -> (resolver: any PointAnsweringResolver, options: ResolverOptions, timeout: Double, points: [ConflictPoint])?
    {
        for name in choice.chain {
            guard let resolver = choice.resolvers[name] as? any PointAnsweringResolver else { continue }
            let options = choice.options[name] ?? ResolverOptions(resolverName: name)
            let timeout = choice.timeout(of: name)
            let points = try await Deadline.running(name, timeout: timeout) { [context] deadline in
                try await resolver.conflictPoints(of: conflict, context: context(conflict, options, deadline))
            }
            if let points { return (resolver, options, timeout, points) }
        }
        return nil
    }

    /// The points a person must decide in `conflict`: the first point-answering resolver's that applies, else its
    /// line hunks.
    func conflictPoints(of conflict: ConflictSet) async throws(TruceError) -> [ConflictPoint] {
        if let answering = try await answeringResolver(for: conflict) { return answering.points }
        return try ConflictAnalysis(conflict).points
    }

    /// The document with a person's answers applied: by the point-answering resolver whose points they are
    /// (everything it merged cleanly kept), else to the line hunks.
    func applying(_ answers: [String: HunkAnswer], to conflict: ConflictSet) async throws(TruceError) -> Data? {
        guard let answering = try await answeringResolver(for: conflict) else {
            return try ConflictAnalysis(conflict).applying(answers)
        }
        let resolver = answering.resolver
        return try await Deadline.running(resolver.name, timeout: answering.timeout) { [context] deadline in
            try await resolver.applying(answers, to: conflict, context: context(conflict, answering.options, deadline))
        }
    }

    /// The point-answering resolver's drawing of `answers` with the open points between markers; nil when the chain
    /// has no such resolver or it cannot draw them.
    func preview(_ answers: [String: HunkAnswer], of conflict: ConflictSet, markers: PreviewMarkers) async throws(TruceError) -> Data? {
        guard let answering = try await answeringResolver(for: conflict) else { return nil }
        let resolver = answering.resolver
        return try await Deadline.running(resolver.name, timeout: answering.timeout) { [context] deadline in
            try await resolver.preview(answers, of: conflict, markers: markers, context: context(conflict, answering.options, deadline))
        }
    }

    /// True for an error of the store or the file system under a resolver (or another writer's lock), not of the
    /// resolver: it is reported as it is, never settled around.
    static func isStoreProblem(_ error: TruceError) -> Bool {
        switch error {
        case .storeFailure, .busy, .storeNotFound, .notAStore, .cancelled: true
        default: false
        }
    }
}

extension ResolverChoice {
    /// The seconds `name` may run: its `resolver.<name>.timeout`, else its `defaultTimeout`.
    func timeout(of name: String) -> Double {
        timeouts[name] ?? resolvers[name]?.defaultTimeout ?? ResolverTimeouts.default
    }
}
