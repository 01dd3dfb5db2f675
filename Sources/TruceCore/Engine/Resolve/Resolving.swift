import Foundation
internal import TruceGit

/// Settling conflicts: by the resolver chain config picks, by one resolver given directly, by recorded answers, or by
/// a person's answers; and turning a resolution back into its conflict.
///
/// The policy of resolving lives here, over the store's sessions: what a
/// conflict is for a person (the delete-conflict policy applied), which
/// chain applies, replay before any resolver, validation of what a person
/// gives, the identical-content collapse, and one write per resolution or
/// one pack for many.
struct Resolving: Sendable {
    let access: StoreAccess
    /// The resolvers the chains may use.
    let registry: ResolverRegistry

    // MARK: - Reading a conflict

    /// A conflict and what decides how it is settled, read in one session: the routing and the config.
    struct ReadConflict: Sendable {
        let conflict: ConflictSet
        let routing: RoutingInputs
    }

    /// `key`'s conflict set (every head and the base, with their bytes) and its routing, read in one session; the
    /// store's part of the routing as `shared` when given.
    func read(_ key: DocumentKey, sharing shared: RoutingInputs.Shared? = nil) throws(TruceError) -> ReadConflict {
        try access.read { session in
            var conflict = try session.conflictSet(of: key) { [access] (ids: [VersionID]) throws(TruceError) -> ConflictSet.Side? in
                try access.read { try $0.engine.mergeBaseSide(of: ids[0], and: Array(ids.dropFirst()), key: key) }
            }
            conflict.mergeBasesLookup = { [access] (ids: [VersionID]) throws(TruceError) -> [ConflictSet.Side] in
                try access.read { session in
                    try session.engine.mergeBases(of: ids[0], and: Array(ids.dropFirst()), key: key).map { version in
                        ConflictSet.Side(version: version, content: try session.contents(of: version))
                    }
                }
            }
            return ReadConflict(conflict: conflict, routing: try session.routingInputs(for: key, sharing: shared))
        }
    }

    /// The conflict set of a document in conflict: every head and the base, with their bytes.
    func conflictSet(of key: DocumentKey) throws(TruceError) -> ConflictSet {
        try read(key).conflict
    }

    /// `conflict` with the delete-conflict policy `config` sets applied: what a person decides.
    func contested(_ conflict: ConflictSet, config: [String: String]) throws(TruceError) -> ConflictSet {
        guard conflict.isDeleteConflict, case .contested(let edited) = try conflict.applying(DeleteConflictPolicy(localConfig: config)) else {
            return conflict
        }
        return edited
    }

    /// `conflict` with the store's delete-conflict policy applied.
    func contested(_ conflict: ConflictSet) throws(TruceError) -> ConflictSet {
        guard conflict.isDeleteConflict else { return conflict }
        return try contested(conflict, config: access.read { try $0.routedConfig() })
    }

    /// The conflict a person decides: under modify-wins with several edited heads only those, otherwise every head.
    func contestedConflictSet(of key: DocumentKey) throws(TruceError) -> ConflictSet {
        let read = try read(key)
        return try contested(read.conflict, config: read.routing.routedConfig)
    }

    /// The resolver chain for `key`: `explicit` when given, else the one routing picks, with `given` as `explicit`'s
    /// options (nil: config's).
    func resolverChoice(
        for key: DocumentKey, explicit: String? = nil, options given: ResolverOptions? = nil, skippingUnavailable: Bool = false
    ) throws(TruceError) -> ResolverChoice {
        try resolverChoice(
            for: key, routing: access.read { try $0.routingInputs(for: key) }, explicit: explicit, options: given,
            skippingUnavailable: skippingUnavailable)
    }

    /// The resolver chain `routing` picks for `key` (or `explicit`'s), read already.
    func resolverChoice(
        for key: DocumentKey, routing: RoutingInputs, explicit: String? = nil, options given: ResolverOptions? = nil,
        skippingUnavailable: Bool = false
    ) throws(TruceError) -> ResolverChoice {
        try ResolverChoice.make(
            for: key, inputs: routing, registry: registry, explicit: explicit, options: given, skippingUnavailable: skippingUnavailable)
    }

    /// The chain `choice` makes, with the context the store gives its resolvers.
    func chain(_ choice: ResolverChoice) -> ResolverChain {
        ResolverChain(choice: choice) { [self] in
            var context = resolutionContext(for: $0, options: $1, deadline: $2)
            context.fieldRules = choice.fieldRules
            context.fieldInvariants = choice.fieldInvariants
            return context
        }
    }

    /// The chain config picks for `key` (or `explicit`'s).
    func chain(for key: DocumentKey, explicit: String? = nil) throws(TruceError) -> ResolverChain {
        chain(try resolverChoice(for: key, explicit: explicit))
    }

    /// The points a person must decide to settle `key`, as the chain config picks sees them.
    func conflictPoints(of key: DocumentKey) async throws(TruceError) -> [ConflictPoint] {
        let read = try read(key)
        let contested = try contested(read.conflict, config: read.routing.routedConfig)
        let chain = chain(try resolverChoice(for: key, routing: read.routing))
        return try await BlockingExecutor.preferring { () async throws(TruceError) in try await chain.conflictPoints(of: contested) }
    }

    // MARK: - Resolving by machine

    /// Settles `key` with the chain config picks (or `resolverName`'s), replaying recorded answers first unless a
    /// resolver is named.
    func resolve(_ key: DocumentKey, resolverName: String?, device: String, dryRun: Bool) async throws(TruceError) -> ResolveResult {
        try await resolve(key, device: device, dryRun: dryRun, replaying: resolverName == nil) { (routing) throws(TruceError) in
            try resolverChoice(for: key, routing: routing, explicit: resolverName)
        }
    }

    /// Settles `key` with `resolver` alone, bypassing config; `options` in place of config's (nil: config's).
    func resolve(
        _ key: DocumentKey, using resolver: any Resolver, options: ResolverOptions?, device: String, dryRun: Bool
    ) async throws(TruceError) -> ResolveResult {
        let alone = Resolving(access: access, registry: ResolverRegistry([resolver]))
        return try await alone.resolve(key, device: device, dryRun: dryRun, replaying: false) { (routing) throws(TruceError) in
            try alone.resolverChoice(for: key, routing: routing, explicit: resolver.name, options: options, skippingUnavailable: true)
        }
    }

    /// Settles `key` with the chain `choice` gives, once the conflict is read: heads of identical content are merged,
    /// and a document that is not in conflict has nothing to resolve.
    private func resolve(
        _ key: DocumentKey, device: String, dryRun: Bool, replaying: Bool, choice: (RoutingInputs) throws(TruceError) -> ResolverChoice
    ) async throws(TruceError) -> ResolveResult {
        let versions = try access.read { try $0.versions(of: key) }
        guard versions.state == .inConflict else {
            guard let current = versions.current else { throw .documentNotFound(key) }
            guard let identical = try identicalContentSettlement(versions) else { return .nothingToResolve(current) }
            if dryRun { return .wouldResolve(content: identical.conflict.current.content, resolver: identical.resolver) }
            return try write(identical.conflict, settlement: identical.settlement, resolver: identical.resolver, device: device)
        }
        let read = try read(key)
        let chain = chain(try choice(read.routing))
        switch try await decide(read.conflict, chain: chain, replaying: replaying, config: read.routing.routedConfig) {
        case .needsPerson(let points, let resolver, let reasons):
            return .needsPerson(points, resolver: resolver, reasons: reasons)
        case .settle(let settlement, let content, let resolver):
            if dryRun { return .wouldResolve(content: content, resolver: resolver) }
            return try write(read.conflict, settlement: settlement, resolver: resolver, device: device)
        }
    }

    /// Settles every document in conflict (or just `requested`) as `resolve` would, writing all the resolutions as one
    /// pack; cancelling the task stops it before any resolution is written.
    func resolveAll(
        _ requested: [DocumentKey]?, resolverName: String?, device: String, progress: (@Sendable (_ done: Int, _ total: Int) -> Void)?
    ) async throws(TruceError) -> [DocumentKey: ResolveResult] {
        let keys: [DocumentKey]
        var settled: [Settled] = []
        // The store's routing (its config, attributes, fields and the synced routing) is read once, at the start, in
        // the session that finds the marked documents.
        let (shared, marked) = try access.read { session in
            (try session.sharedRoutingInputs(), requested == nil ? try session.markedDocuments() : [])
        }
        if let requested {
            keys = requested
        } else {
            keys = marked.filter { $0.state == .inConflict }.map(\.key)
            // Heads with identical content are no conflict, but one head is tidier and the same everywhere.
            for versions in marked where versions.state != .inConflict {
                if let identical = try identicalContentSettlement(versions) { settled.append(identical) }
            }
        }
        // Recorded answers are looked up once per id for the whole call, however many conflicts share it.
        let lookup = RecordedAnswerLookup()
        // One hop onto the executor for the whole loop: the chain's own hops then stay on it.
        let (results, decided) = try await BlockingExecutor.preferring { () async throws(TruceError) in
            var results: [DocumentKey: ResolveResult] = [:]
            for (done, key) in keys.enumerated() {
                if Task.isCancelled { throw .cancelled }
                progress?(done, keys.count)
                // One read of the document and its routing; then the chain, and what settles it.
                let read = try read(key, sharing: shared)
                let conflict = read.conflict
                let chain = chain(try resolverChoice(for: key, routing: read.routing, explicit: resolverName))
                switch try await decide(conflict, chain: chain, replaying: resolverName == nil, config: read.routing.routedConfig, lookup: lookup) {
                case .needsPerson(let points, let resolver, let reasons):
                    results[key] = .needsPerson(points, resolver: resolver, reasons: reasons)
                case .settle(let settlement, _, let resolver):
                    settled.append(Settled(conflict: conflict, settlement: settlement, resolver: resolver))
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

    /// What settles `conflict`: the answers recorded for it, when they answer all of it and `config` replays them
    /// (unless `replaying` is false: a resolver named by the call), else `chain`.
    private func decide(
        _ conflict: ConflictSet, chain: ResolverChain, replaying: Bool, config: [String: String], lookup: RecordedAnswerLookup? = nil
    ) async throws(TruceError) -> ResolverChain.Decision {
        let book = RecordedAnswerBook(access: access, resolving: self)
        let contested = try contested(conflict, config: config)
        if replaying, try RecordedAnswerBook.isReplaying(config),
            let replayed = try await book.matching(contested, chain: chain, lookup: lookup).replayed(on: contested, chain: chain)
        {
            if let content = replayed.content, let problem = OutputValidation.problem(with: content, for: conflict.key) {
                let reason = "\(ResolverNames.recordedAnswer): the recorded answer makes \(problem); not replayed"
                return try await chain.decide(conflict, reasons: [reason])
            }
            return .settle(.content(replayed.content), content: replayed.content, resolver: ResolverNames.recordedAnswer)
        }
        return try await BlockingExecutor.preferring { () async throws(TruceError) in try await chain.decide(conflict) }
    }

    /// The resolution that merges a document's heads of identical content into one; nil when it has one head.
    private func identicalContentSettlement(_ versions: DocumentVersions) throws(TruceError) -> Settled? {
        guard let current = versions.current, !versions.equivalents.isEmpty, versions.state != .inConflict else { return nil }
        let side = ConflictSet.Side(version: current, content: try access.read { try $0.contents(of: current) })
        let conflict = ConflictSet(key: versions.key, current: side, conflicts: [], base: nil, equivalents: versions.equivalents)
        return Settled(conflict: conflict, settlement: .kept(current), resolver: ResolverNames.identicalContent)
    }

    // MARK: - Resolving by a person

    /// Writes the resolution a person chose, one answer per conflict point of `conflictPoints(of:)`, through the chain
    /// config picks.
    func resolve(_ key: DocumentKey, answers: [String: HunkAnswer], device: String) async throws(TruceError) -> ResolveResult {
        let read = try read(key)
        return try await resolve(read.conflict, answers: answers, chain: chain(try resolverChoice(for: key, routing: read.routing)), device: device)
    }

    /// Writes the resolution `answers` make of `conflict` through `chain`, and records each answer for the points they
    /// settle.
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

    /// Writes a person's whole file (nil: a deletion) as the resolution of `key`, and records it as the answer to the
    /// whole conflict.
    func resolve(_ key: DocumentKey, content: Data?, device: String) throws(TruceError) -> ResolveResult {
        let conflict = try conflictSet(of: key)
        let record = try? ConflictRecording.record(of: contested(conflict), content: content, by: device, at: Date())
        return try writePersonal(conflict, content: content, device: device, records: record.map { [$0] } ?? [])
    }

    /// Writes the answers of earlier releases: line hunks of the contested set, whatever resolver the document is routed to.
    func resolveLineHunks(_ key: DocumentKey, answers: [String: HunkAnswer], device: String) throws(TruceError) -> ResolveResult {
        let conflict = try conflictSet(of: key)
        let content = try ConflictAnalysis(contested(conflict)).applying(answers)
        return try writePersonal(conflict, content: content, device: device, records: [])
    }

    /// A session over `conflict` holding `answers`, as the chain sees its points.
    func session(of conflict: ConflictSet, chain: ResolverChain, answers: [String: HunkAnswer]) async throws(TruceError)
        -> ResolutionSession
    {
        let answering = try await BlockingExecutor.preferring { () async throws(TruceError) in try await chain.answeringResolver(for: conflict) }
        let analysis = answering == nil ? try ConflictAnalysis(conflict) : nil
        return ResolutionSession(
            key: conflict.key, conflict: conflict, base: conflict.base?.version, points: answering?.points ?? analysis!.points, chain: chain,
            analysis: analysis, answers: answers)
    }

    /// Validates a person's resolution and writes it, named `person`.
    private func writePersonal(_ conflict: ConflictSet, content: Data?, device: String, records: [RecordedAnswer]) throws(TruceError)
        -> ResolveResult
    {
        if let content, let problem = OutputValidation.problem(with: content, for: conflict.key) {
            throw .invalidAnswer("the resolution of \(conflict.key) is \(problem); nothing was written")
        }
        return try write(conflict, settlement: .content(content), resolver: ResolverNames.person, device: device, records: records)
    }

    // MARK: - Writing

    /// A conflict as decided, before it is written.
    struct Settled: Sendable {
        let conflict: ConflictSet
        let settlement: Settlement
        let resolver: String
    }

    /// Writes the resolution commit of `conflict` and drops the heads it settles, in one step; the answers a person
    /// gave are recorded in the same write.
    private func write(
        _ conflict: ConflictSet, settlement: Settlement, resolver: String, device: String, records: [RecordedAnswer] = []
    ) throws(TruceError) -> ResolveResult {
        let author = try DeviceName.validated(device)
        return try access.write { session in
            let now = Date()
            let id = try session.resolve(conflict, settlement: settlement, resolver: resolver, author: author, now: now)
            for record in records {
                _ = try session.stageSave(record.encoded, to: RecordedAnswer.key(of: record.id), base: nil, author: author, date: now)
            }
            let committed = try session.commit()
            return .resolved(try committed.version(id, of: conflict.key), resolver: resolver, state: try committed.versions(of: conflict.key).state)
        }
    }

    /// Writes many resolutions as one pack, then publishes their heads together: `resolveAll`'s bulk path.
    private func writeAll(_ settled: [Settled], device: String, cancellation: Cancellation?) throws(TruceError) -> [DocumentKey: ResolveResult] {
        guard !settled.isEmpty else { return [:] }
        let author = try DeviceName.validated(device)
        return try access.write { session in
            let now = Date()
            let written = try settled.map { item in
                (
                    key: item.conflict.key, resolver: item.resolver,
                    id: try session.resolve(item.conflict, settlement: item.settlement, resolver: item.resolver, author: author, now: now)
                )
            }
            let committed = try session.commit(cancellation: cancellation)
            var results: [DocumentKey: ResolveResult] = [:]
            for (key, resolver, id) in written {
                results[key] = .resolved(try committed.version(id, of: key), resolver: resolver, state: try committed.versions(of: key).state)
            }
            return results
        }
    }

    /// Turns the newest resolution among `key`'s heads back into the conflict it settled, by `author`.
    func reopen(_ key: DocumentKey, author: String) throws(TruceError) -> DocumentVersions {
        try access.write { try $0.reopen(key, author: author) }
    }

    // MARK: - What resolvers see

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
            history: { [access] (limit: Int) async throws(TruceError) -> [Version] in
                try access.read { try $0.engine.history(from: tips, of: key, limit: limit) }
            },
            content: { [access] (version: Version) async throws(TruceError) -> Data? in
                guard version.key == key else {
                    throw TruceError.versionOfAnotherDocument(version.id, requested: key, actual: version.key.rawValue)
                }
                return try access.read { try $0.contents(of: version) }
            })
    }
}
