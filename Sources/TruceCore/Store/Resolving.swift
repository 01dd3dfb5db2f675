import Foundation
internal import TruceGit

/// Settling conflicts: by the resolver chain config picks, by one resolver given directly, or by a person's answers;
/// and turning a resolution back into its conflict.
extension DocumentStore {
    /// The resolver name a person's resolution records in `Resolved-By:`.
    public static let personResolverName = "person"

    /// The resolver name of a resolution that merges heads holding identical content into one.
    public static let identicalContentResolverName = "identical-content"

    /// Seconds a resolver may run when neither `resolver.<name>.timeout` nor the resolver's `defaultTimeout` says.
    public static let defaultResolverTimeout: Double = 30

    /// The timeouts `resolver.<name>.timeout` may set, in seconds: from a tenth of a second to a day.
    public static let resolverTimeoutRange = 0.1...86_400.0

    /// The conflict set of a document in conflict: every head and the base, with their bytes.
    public func conflictSet(of key: DocumentKey) throws(TruceError) -> ConflictSet {
        try withEngine { engine in
            try engine.conflictSet(of: key) { [self] (ids: [VersionID]) throws(TruceError) -> ConflictSet.Side? in
                try withEngine { try $0.mergeBaseSide(of: ids[0], and: Array(ids.dropFirst()), key: key) }
            }
        }
    }

    /// The conflict a person decides: under modify-wins with several edited heads only those, otherwise every head.
    ///
    /// `conflictPoints(for:)`, a resolver chain that needs a person, and a
    /// person's answers all use this set, so the points one lists are the
    /// points the other accepts.
    public func contestedConflictSet(of key: DocumentKey) throws(TruceError) -> ConflictSet {
        try contested(conflictSet(of: key))
    }

    /// The resolver chain for `key`: `explicit` when given, else the one the synced routing, `info/attributes` and
    /// config pick (see `ResolverChoice`), with the store's resolvers unless `registry` is given.
    public func resolverChoice(for key: DocumentKey, registry: ResolverRegistry? = nil, explicit: String? = nil) throws(TruceError)
        -> ResolverChoice
    {
        try resolverChoice(for: key, registry: registry ?? resolvers, explicit: explicit, options: nil)
    }

    /// The points a person must decide to settle `key`, as the chain config picks sees them.
    ///
    /// The first `PointAnsweringResolver` of the chain that applies gives its
    /// own points (values at JSON Pointer paths, for the structured resolver);
    /// when none does, they are the line hunks of the contested conflict set
    /// (`ConflictAnalysis`). The resolvers are the store's unless `registry` is given.
    ///
    /// Named `for:` so that it is not an `async` overload of 0.1.0's
    /// synchronous `conflictPoints(of:)`, which Swift would pick over it in
    /// `async` code that calls that one without `await`.
    public func conflictPoints(for key: DocumentKey, registry: ResolverRegistry? = nil) async throws(TruceError) -> [ConflictPoint] {
        let contested = try contestedConflictSet(of: key)
        let chain = try chain(for: key, registry: registry ?? resolvers)
        return try await BlockingExecutor.preferring { () async throws(TruceError) in try await chain.conflictPoints(of: contested) }
    }

    /// Settles `key` with the resolver chain config picks (or `resolverName`'s chain), writing a resolution.
    ///
    /// A deletion against an edit is settled first by `truce.deleteConflict`;
    /// under modify-wins, several edited heads still go to the chain, and the
    /// resolution's parents are every head, the deletions included. Each
    /// resolver of the chain runs until one settles the conflict with output
    /// that passes `OutputValidation`, or asks for a person. When none does,
    /// the result is the conflict points, or, when a resolver of the chain
    /// failed (threw, or did not finish within its timeout), its error.
    /// Nothing is written unless a resolver settled it and `dryRun` is false.
    ///
    /// It may be called as often as one likes: heads holding identical
    /// content are merged into one version (as `resolveAll` merges them), and
    /// a settled or deleted document is `.nothingToResolve`. The resolvers are
    /// the store's unless `registry` is given.
    public func resolve(
        _ key: DocumentKey, registry: ResolverRegistry? = nil, resolverName: String? = nil, device: String? = nil, dryRun: Bool = false
    ) async throws(TruceError) -> ResolveResult {
        let registry = registry ?? resolvers
        return try await resolve(key, device: author(device), dryRun: dryRun, replaying: resolverName == nil) { () throws(TruceError) in
            try resolverChoice(for: key, registry: registry, explicit: resolverName, options: nil)
        }
    }

    /// Settles `key` with one resolver given directly, bypassing config: `store.resolve(key, using: OverwriteWithCurrent())`.
    ///
    /// `options` are what the resolver gets, in place of the
    /// `resolver.<name>.<option>` lines of config (nil: those lines). The
    /// delete-conflict policy still comes from config. The call can use no
    /// other resolver, so a fallback those options name is skipped, and the
    /// result's reasons say so: it never fails the resolver that was given.
    public func resolve(
        _ key: DocumentKey, using resolver: any Resolver, options: ResolverOptions? = nil, device: String? = nil, dryRun: Bool = false
    ) async throws(TruceError) -> ResolveResult {
        try await resolve(key, device: author(device), dryRun: dryRun, replaying: false) { () throws(TruceError) in
            try resolverChoice(
                for: key, registry: ResolverRegistry([resolver]), explicit: resolver.name, options: options, skippingUnavailable: true)
        }
    }

    /// Writes the resolution a person chose, one answer per conflict point of `conflictPoints(for:)`.
    ///
    /// Answers go to the resolver whose points they are (keyed by id or, for
    /// a structured document, by path); everything that resolver merged
    /// cleanly is kept. The resolution's parents are every head; the result
    /// names the resolver `person` (`personResolverName`). Answers for a
    /// document that is not in conflict are an error. The resolvers are the
    /// store's unless `registry` is given.
    ///
    /// Labelled `answering:` so that it is not an `async` overload of 0.1.0's
    /// synchronous `resolve(_:answers:device:)`.
    @discardableResult
    public func resolve(
        _ key: DocumentKey, answering answers: [String: HunkAnswer], registry: ResolverRegistry? = nil, device: String? = nil
    ) async throws(TruceError) -> ResolveResult {
        let device = try author(device)
        let conflict = try conflictSet(of: key)
        return try await resolve(conflict, answers: answers, chain: chain(for: key, registry: registry ?? resolvers), device: device)
    }

    /// Writes the resolution `answers` make of `conflict` through `chain`, every person's answers and a session's,
    /// and records each answer for the points they settle.
    func resolve(_ conflict: ConflictSet, answers: [String: HunkAnswer], chain: ResolverChain, device: String) async throws(TruceError)
        -> ResolveResult
    {
        let contested = try contested(conflict)
        let content = try await BlockingExecutor.preferring { () async throws(TruceError) in try await chain.applying(answers, to: contested) }
        var records: [RecordedAnswer] = []
        if let session = try? await session(of: contested, chain: chain, answers: answers) {
            records = (try? ConflictRecording.records(of: session, by: device, at: Date())) ?? []
        }
        return try writePersonal(conflict, content: content, device: device, records: records)
    }

    /// Writes the resolution a person made as a whole file, `content` (nil: settle as a deletion); the result names
    /// the resolver `person`.
    ///
    /// Labelled `to:` so that it is not an `async` overload of 0.1.0's
    /// synchronous `resolve(_:content:device:)`.
    @discardableResult
    public func resolve(_ key: DocumentKey, to content: Data?, device: String? = nil) async throws(TruceError) -> ResolveResult {
        try writeWhole(try conflictSet(of: key), content: content, device: author(device))
    }

    /// Writes a person's whole file as the resolution of `conflict`, and records it as the answer to the whole conflict.
    func writeWhole(_ conflict: ConflictSet, content: Data?, device: String) throws(TruceError) -> ResolveResult {
        let record = try? ConflictRecording.record(of: contested(conflict), content: content, by: device, at: Date())
        return try writePersonal(conflict, content: content, device: device, records: record.map { [$0] } ?? [])
    }

    /// Settles every document in conflict (or just `requested`) as `resolve` would, writing all the resolutions as one
    /// pack; cancelling the task stops it before any resolution is written.
    ///
    /// The bulk path for many conflicts: each document is decided on its own,
    /// then every resolution is written at once, and the heads are published
    /// together. A document that needs a person is reported and left alone;
    /// heads holding identical content are merged into one. `progress` hears
    /// (documents decided, documents to decide). A cancellation between
    /// documents, or before the pack is written, throws `TruceError.cancelled`
    /// and writes nothing. The resolvers are the store's unless `registry` is given.
    public func resolveAll(
        _ requested: [DocumentKey]? = nil, registry: ResolverRegistry? = nil, resolverName: String? = nil, device: String? = nil,
        progress: (@Sendable (_ done: Int, _ total: Int) -> Void)? = nil
    ) async throws(TruceError) -> [DocumentKey: ResolveResult] {
        let device = try author(device)
        let registry = registry ?? resolvers
        let keys: [DocumentKey]
        var settled: [(conflict: ConflictSet, settlement: Settlement, resolver: String)] = []
        if let requested {
            keys = requested
        } else {
            let marked = try withEngine { try $0.markedDocuments() }
            keys = marked.filter { $0.state == .inConflict }.map(\.key)
            // Heads with identical content are no conflict, but one head is tidier and the same everywhere.
            for versions in marked where versions.state != .inConflict {
                if let identical = try identicalContentSettlement(versions) { settled.append(identical) }
            }
        }
        // One hop onto the executor for the whole loop: the chain's own hops then stay on it.
        let (results, decided) = try await BlockingExecutor.preferring { () async throws(TruceError) in
            var results: [DocumentKey: ResolveResult] = [:]
            for (done, key) in keys.enumerated() {
                if Task.isCancelled { throw .cancelled }
                progress?(done, keys.count)
                let conflict = try conflictSet(of: key)
                let chain = try chain(for: key, registry: registry, explicit: resolverName)
                switch try await decide(conflict, chain: chain, replaying: resolverName == nil) {
                case .needsPerson(let points, let resolver, let reasons):
                    results[key] = .needsPerson(points, resolver: resolver, reasons: reasons)
                case .settle(let settlement, _, let resolver):
                    settled.append((conflict, settlement, resolver))
                }
            }
            progress?(keys.count, keys.count)
            return (results, settled)
        }
        let written = try await BlockingExecutor.run { [self] (cancellation) throws(TruceError) in
            try writeAll(decided, device: device, cancellation: cancellation)
        }
        return results.merging(written) { $1 }
    }

    /// Turns the newest resolution among the heads back into the conflict it settled, as new versions sync carries.
    ///
    /// Each version the resolution settled comes back as a reopening: a
    /// version whose parent is the resolution and whose tree, author and date
    /// are that settled version's (`Reopens:` names the resolution,
    /// `Restores:` the version). The resolution is then an ancestor of every
    /// head, so a replica that still has it as a head drops it when it syncs,
    /// and the conflict stays open everywhere until someone resolves it again.
    /// Reopenings are a function of the resolution alone: two replicas that
    /// reopen the same resolution write the same versions. The base of the
    /// reopened conflict is the base the settled versions had.
    @discardableResult
    public func reopen(_ key: DocumentKey, device: String? = nil) throws(TruceError) -> DocumentVersions {
        let author = try author(device)
        return try transacting(.packed) { try $0.reopen(key, author: author) }
    }

    // MARK: - The steps

    /// The chain config picks for `key` (or `explicit`'s), with the context the store gives its resolvers.
    func chain(for key: DocumentKey, registry: ResolverRegistry, explicit: String? = nil) throws(TruceError) -> ResolverChain {
        ResolverChain(choice: try resolverChoice(for: key, registry: registry, explicit: explicit, options: nil)) { [self] in
            resolutionContext(for: $0, options: $1, deadline: $2)
        }
    }

    /// The chain as `resolverChoice(for:registry:explicit:)` makes it, with the options `given` for `explicit`.
    func resolverChoice(
        for key: DocumentKey, registry: ResolverRegistry, explicit: String?, options given: ResolverOptions?, skippingUnavailable: Bool = false
    ) throws(TruceError) -> ResolverChoice {
        let inputs = try withEngine { try $0.routingInputs(for: key) }
        return try ResolverChoice.make(
            for: key, inputs: inputs, registry: registry, explicit: explicit, options: given, skippingUnavailable: skippingUnavailable)
    }

    /// Settles `key` with the chain `choice` gives, once the conflict is read: heads of identical content are merged,
    /// and a document that is not in conflict has nothing to resolve.
    private func resolve(
        _ key: DocumentKey, device: String, dryRun: Bool, replaying: Bool, choice: () throws(TruceError) -> ResolverChoice
    ) async throws(TruceError) -> ResolveResult {
        let versions = try versions(of: key)
        guard versions.state == .inConflict else {
            guard versions.current != nil else { throw .documentNotFound(key) }
            guard let identical = try identicalContentSettlement(versions) else { return .nothingToResolve(versions.current!) }
            if dryRun { return .wouldResolve(content: identical.conflict.current.content, resolver: identical.resolver) }
            return try write(identical.conflict, settlement: identical.settlement, resolver: identical.resolver, device: device)
        }
        let conflict = try conflictSet(of: key)
        let choice = try choice()
        let chain = ResolverChain(choice: choice) { [self] in resolutionContext(for: $0, options: $1, deadline: $2) }
        switch try await decide(conflict, chain: chain, replaying: replaying) {
        case .needsPerson(let points, let resolver, let reasons):
            return .needsPerson(points, resolver: resolver, reasons: reasons)
        case .settle(let settlement, let content, let resolver):
            if dryRun { return .wouldResolve(content: content, resolver: resolver) }
            return try write(conflict, settlement: settlement, resolver: resolver, device: device)
        }
    }

    /// What settles `conflict`: the answers recorded for it, when they answer all of it (unless `replaying` is false:
    /// a resolver named by the call), else `chain`.
    private func decide(_ conflict: ConflictSet, chain: ResolverChain, replaying: Bool) async throws(TruceError) -> ResolverChain.Decision {
        if replaying, let replayed = try await replay(try contested(conflict), chain: chain) {
            if let content = replayed.content, let problem = OutputValidation.problem(with: content, for: conflict.key) {
                let reason = "\(Self.recordedAnswerResolverName): the recorded answer makes \(problem); not replayed"
                return try await chain.decide(conflict, reasons: [reason])
            }
            return .settle(.content(replayed.content), content: replayed.content, resolver: Self.recordedAnswerResolverName)
        }
        return try await BlockingExecutor.preferring { () async throws(TruceError) in try await chain.decide(conflict) }
    }

    /// A session over `conflict` holding `answers`, as the chain sees its points.
    private func session(of conflict: ConflictSet, chain: ResolverChain, answers: [String: HunkAnswer]) async throws(TruceError)
        -> ResolutionSession
    {
        let answering = try await BlockingExecutor.preferring { () async throws(TruceError) in try await chain.answeringResolver(for: conflict) }
        let analysis = answering == nil ? try ConflictAnalysis(conflict) : nil
        return ResolutionSession(
            key: conflict.key, conflict: conflict, base: conflict.base?.version, points: answering?.points ?? analysis!.points, chain: chain,
            analysis: analysis, answers: answers)
    }

    /// The resolution that merges a document's heads of identical content into one; nil when it has one head.
    private func identicalContentSettlement(_ versions: DocumentVersions) throws(TruceError)
        -> (conflict: ConflictSet, settlement: Settlement, resolver: String)?
    {
        guard let current = versions.current, !versions.equivalents.isEmpty, versions.state != .inConflict else { return nil }
        let side = ConflictSet.Side(version: current, content: try contents(of: current))
        let conflict = ConflictSet(key: versions.key, current: side, conflicts: [], base: nil, equivalents: versions.equivalents)
        return (conflict, .kept(current), Self.identicalContentResolverName)
    }

    /// `conflict` with the delete-conflict policy applied: what a person decides.
    func contested(_ conflict: ConflictSet) throws(TruceError) -> ConflictSet {
        guard conflict.isDeleteConflict else { return conflict }
        let policy = try DeleteConflictPolicy(localConfig: try withEngine { try $0.routedConfig() })
        guard case .contested(let edited) = try conflict.applying(policy) else { return conflict }
        return edited
    }

    /// Validates a person's resolution and writes it, named `person`.
    func writeOnCallingThread(_ conflict: ConflictSet, content: Data?, device: String) throws(TruceError) -> ResolveResult {
        try writePersonal(conflict, content: content, device: device, records: [])
    }

    /// Validates a person's resolution and writes it, named `person`.
    private func writePersonal(_ conflict: ConflictSet, content: Data?, device: String, records: [RecordedAnswer]) throws(TruceError)
        -> ResolveResult
    {
        if let content, let problem = OutputValidation.problem(with: content, for: conflict.key) {
            throw .invalidAnswer("the resolution of \(conflict.key) is \(problem); nothing was written")
        }
        return try write(conflict, settlement: .content(content), resolver: Self.personResolverName, device: device, records: records)
    }

    /// Writes the resolution commit of `conflict` and drops the heads it settles, in one step; the answers a person
    /// gave are recorded in the same write.
    private func write(
        _ conflict: ConflictSet, settlement: Settlement, resolver: String, device: String, records: [RecordedAnswer] = []
    ) throws(TruceError) -> ResolveResult {
        let author = try DeviceName.validated(device)
        return try transacting(.packed) { transaction in
            let now = Date()
            let id = try transaction.resolve(conflict, settlement: settlement, resolver: resolver, author: author, now: now)
            for record in records {
                let key = RecordedAnswer.key(of: record.id)
                _ = try transaction.stageSave(record.encoded, to: key, base: nil, author: author, date: now)
            }
            let committed = try transaction.commit()
            return .resolved(try committed.version(id, of: conflict.key), resolver: resolver, state: try committed.versions(of: conflict.key).state)
        }
    }

    /// Writes many resolutions as one pack, then publishes their heads together: `resolveAll`'s bulk path.
    private func writeAll(
        _ settled: [(conflict: ConflictSet, settlement: Settlement, resolver: String)], device: String, cancellation: Cancellation?
    ) throws(TruceError) -> [DocumentKey: ResolveResult] {
        guard !settled.isEmpty else { return [:] }
        let author = try DeviceName.validated(device)
        return try transacting(.packed) { transaction in
            let now = Date()
            let written = try settled.map { conflict, settlement, resolver in
                (
                    key: conflict.key, id: try transaction.resolve(conflict, settlement: settlement, resolver: resolver, author: author, now: now),
                    resolver
                )
            }
            let committed = try transaction.commit(cancellation: cancellation)
            var results: [DocumentKey: ResolveResult] = [:]
            for (key, id, resolver) in written {
                results[key] = .resolved(try committed.version(id, of: key), resolver: resolver, state: try committed.versions(of: key).state)
            }
            return results
        }
    }

    /// The context the store gives a resolver of `conflict`'s chain: `history` and `content` read this store.
    private func resolutionContext(for conflict: ConflictSet, options: ResolverOptions, deadline: ContinuousClock.Instant) -> ResolutionContext {
        // The heads the conflict was read with, not the store's heads when asked: a save meanwhile does not change the answer.
        resolutionContext(of: conflict.key, tips: conflict.settledVersions.map(\.id), options: options, deadline: deadline)
    }

    /// The context the store gives a resolver working on `key`: `history` reads back from `tips`, `content` reads
    /// versions of `key` only.
    func resolutionContext(of key: DocumentKey, tips: [VersionID], options: ResolverOptions, deadline: ContinuousClock.Instant)
        -> ResolutionContext
    {
        ResolutionContext(
            options: options, deadline: deadline,
            history: { [self] (limit: Int) async throws(TruceError) -> [Version] in
                try withEngine { try $0.history(from: tips, of: key, limit: limit) }
            },
            content: { [self] (version: Version) async throws(TruceError) -> Data? in
                guard version.key == key else {
                    throw TruceError.versionOfAnotherDocument(version.id, requested: key, actual: version.key.rawValue)
                }
                return try contents(of: version)
            })
    }
}
