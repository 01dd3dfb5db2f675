import Foundation
internal import TruceGit

/// What `resolve` did, or would do with `dryRun`: every `resolve` overload returns one, a person's answers included.
public enum ResolveResult: Sendable {
    /// A resolution was written; `state` is the document's state afterwards (a save that landed meanwhile keeps it in conflict).
    case resolved(Version, resolver: String, state: DocumentState)
    /// A person must decide these points; nothing was written.
    case needsPerson([ConflictPoint], resolver: String, reasons: [String])
    /// `dryRun`: the resolver settled it, but nothing was written.
    case wouldResolve(content: Data?, resolver: String)
    /// The document was settled already (one head, this version, content or a deletion): nothing was written.
    case nothingToResolve(Version)

    /// The resolution written, for `.resolved`; nil when nothing was written.
    public var version: Version? {
        if case .resolved(let version, _, _) = self { version } else { nil }
    }
}

extension DocumentStore {
    /// The conflict set of a document in conflict: every head and the base, with their bytes.
    public func conflictSet(of key: DocumentKey) throws(TruceError) -> ConflictSet {
        try withRepository { repository in
            let versions = try Self.documentVersions(of: key, in: repository)
            guard versions.state == .inConflict, let current = versions.current else {
                if versions.current == nil { throw TruceError.documentNotFound(key) }
                throw TruceError.notInConflict(key)
            }
            func side(_ version: Version) throws -> ConflictSet.Side {
                ConflictSet.Side(version: version, content: try Self.contents(of: version, in: repository))
            }
            let heads = versions.heads.map(\.id)
            // Two heads: their well-defined merge base (criss-cross and reopened conflicts included); more: the octopus base.
            let base =
                heads.count == 2
                ? try Self.mergeBaseSide(of: heads[0], and: [heads[1]], key: key, in: repository)
                : try versions.base.map(side)
            return ConflictSet(
                key: key, current: try side(current), conflicts: try versions.conflicts.map(side), base: base, equivalents: versions.equivalents,
                mergeBase: { [self] (ids: [VersionID]) throws(TruceError) -> ConflictSet.Side? in
                    try withRepository { try Self.mergeBaseSide(of: ids[0], and: Array(ids.dropFirst()), key: key, in: $0) }
                }
            )
        }
    }

    /// The points a person must decide to settle `key`: those of `contestedConflictSet(of:)`.
    public func conflictPoints(of key: DocumentKey) throws(TruceError) -> [ConflictPoint] {
        try ConflictAnalysis(contestedConflictSet(of: key)).points
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
    /// Idempotent: heads with identical content are merged into one version
    /// (`identicalContentResolverName`), and a settled document is
    /// `ResolveResult/nothingToResolve(_:)`, so it can be called after every sync.
    public func resolve(
        _ key: DocumentKey, registry: ResolverRegistry, resolverName: String? = nil, device: String? = nil,
        dryRun: Bool = false
    ) async throws(TruceError) -> ResolveResult {
        try await resolve(key, device: author(device), dryRun: dryRun) { () throws(TruceError) in
            try resolverChoice(for: key, registry: registry, explicit: resolverName)
        }
    }

    /// Settles `key` with the chain `choice` gives, once the conflict is read; a document in no conflict is settled or
    /// reported first (`resolvingWithoutConflict`), so resolving again is never an error.
    private func resolve(
        _ key: DocumentKey, device: String, dryRun: Bool,
        choice: () throws(TruceError) -> ResolverChoice
    ) async throws(TruceError) -> ResolveResult {
        if let settled = try resolvingWithoutConflict(key, device: device, dryRun: dryRun) { return settled }
        let conflict = try conflictSet(of: key)
        let choice = try choice()
        return try await Self.offThePool { () async throws(TruceError) -> ResolveResult in
            switch try await decide(conflict, choice: choice) {
            case .needsPerson(let points, let resolver, let reasons):
                return .needsPerson(points, resolver: resolver, reasons: reasons)
            case .settle(let settlement, let content, let resolver):
                if dryRun { return .wouldResolve(content: content, resolver: resolver) }
                return try write(conflict, settlement: settlement, resolver: resolver, device: device)
            }
        }
    }

    /// Settles every document in conflict (or just `requested`) as `resolve` would, writing all the resolutions as one
    /// pack; cancelling the task stops it before any resolution is written.
    ///
    /// The bulk path for many conflicts: each document is decided on its own,
    /// then every resolution is written at once, on a thread of its own, and
    /// the heads are published together. A document that needs a person is
    /// reported and left alone. `progress` hears (documents decided,
    /// documents to decide). A cancellation between documents, or before the
    /// pack is written, throws `TruceError.cancelled` and writes nothing.
    public func resolveAll(
        _ requested: [DocumentKey]? = nil, registry: ResolverRegistry, resolverName: String? = nil, device: String? = nil,
        progress: (@Sendable (_ done: Int, _ total: Int) -> Void)? = nil
    ) async throws(TruceError) -> [DocumentKey: ResolveResult] {
        let device = try author(device)
        let keys: [DocumentKey]
        var settled: [(conflict: ConflictSet, settlement: Settlement, resolver: String)] = []
        if let requested {
            keys = requested
        } else {
            let marked = try withRepository { try ConflictIndex.markedDocuments(in: $0) }
            keys = marked.filter { $0.state == .inConflict }.map(\.key)
            // Heads with identical content are no conflict, but one head is tidier and the same everywhere.
            for versions in marked where versions.state != .inConflict {
                guard let current = versions.current else { continue }
                let side = ConflictSet.Side(version: current, content: try contents(of: current))
                let conflict = ConflictSet(key: versions.key, current: side, conflicts: [], base: nil, equivalents: versions.equivalents)
                settled.append((conflict, .kept(current), Self.identicalContentResolverName))
            }
        }
        var results: [DocumentKey: ResolveResult] = [:]
        for (done, key) in keys.enumerated() {
            if Task.isCancelled { throw .cancelled }
            progress?(done, keys.count)
            let conflict = try conflictSet(of: key)
            let choice = try resolverChoice(for: key, registry: registry, explicit: resolverName)
            switch try await Self.offThePool({ () async throws(TruceError) in try await decide(conflict, choice: choice) }) {
            case .needsPerson(let points, let resolver, let reasons):
                results[key] = .needsPerson(points, resolver: resolver, reasons: reasons)
            case .settle(let settlement, _, let resolver):
                settled.append((conflict, settlement, resolver))
            }
        }
        progress?(keys.count, keys.count)
        let decided = settled
        // The pack is written off Swift's cooperative pool: libgit2 blocks on the disk.
        let written = try await Self.onOwnThread { [self] (cancellation) throws(TruceError) in
            try writeAll(decided, device: device, cancellation: cancellation)
        }
        return results.merging(written) { $1 }
    }

    /// What the delete-conflict policy and the resolver chain decide for `conflict`, before anything is written.
    enum Decision {
        /// Settled, with the content the resolution would hold (nil: a deletion).
        case settle(Settlement, content: Data?, resolver: String)
        case needsPerson([ConflictPoint], resolver: String, reasons: [String])
    }

    /// Runs the delete-conflict policy, then each resolver of the chain until one settles the conflict with output
    /// that passes `OutputValidation` or asks for a person; when none does, the conflict points.
    ///
    /// A resolver that throws, does not finish within its timeout, or keeps
    /// a version that is not a head, has failed: the chain goes on, and the
    /// failure is one of the reasons. When no later resolver settles the
    /// conflict or asks for a person, the first failure is thrown. A store
    /// that fails underneath (`isStoreProblem`), or a cancelled caller, ends
    /// the chain at once: no fallback settles around it.
    func decide(_ conflict: ConflictSet, choice: ResolverChoice) async throws(TruceError) -> Decision {
        let key = conflict.key
        let contested: ConflictSet
        switch try conflict.applying(choice.deleteConflict) {
        case .settled(let kept):
            return .settle(kept.map { .kept($0.version) } ?? .content(nil), content: kept?.content, resolver: choice.deleteConflict.rawValue)
        case .contested(let heads):
            contested = heads
        }
        var reasons: [String] = []
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
            do {
                let options = choice.options[name] ?? ResolverOptions(resolverName: name)
                outcome = try await Self.running(name, timeout: choice.timeout(of: name)) { [self] deadline in
                    try await resolver.resolve(contested, context: resolutionContext(for: contested, options: options, deadline: deadline))
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
                return .settle(.content(content), content: content, resolver: name)
            case .kept(let id):
                guard let kept = contested.heads.first(where: { $0.version.id == id }) else {
                    failed(name, .resolverFailed(name, reason: "it kept \(id.short), which is not a head of \(key)"))
                    continue
                }
                return .settle(.kept(kept.version), content: kept.content, resolver: name)
            }
        }
        if let failure { throw failure }
        return .needsPerson(try ConflictAnalysis(contested).points, resolver: ran.last ?? choice.chain.last ?? "", reasons: reasons)
    }

    /// True for an error of the store or the file system under a resolver (or another writer's lock), not of the
    /// resolver: it is reported as it is, never settled around.
    static func isStoreProblem(_ error: TruceError) -> Bool {
        switch error {
        case .storeFailure, .busy, .storeNotFound, .notAStore, .cancelled: true
        default: false
        }
    }

    /// The points a person must decide to settle `key`, as the chain config picks sees them.
    ///
    /// The first `PointAnsweringResolver` of the chain that applies gives its
    /// own points (values at JSON Pointer paths, for the structured resolver);
    /// when none does, they are the line hunks of `conflictPoints(of:)`.
    public func conflictPoints(of key: DocumentKey, registry: ResolverRegistry) async throws(TruceError) -> [ConflictPoint] {
        let contested = try contestedConflictSet(of: key)
        if let answering = try await answeringResolver(for: contested, registry: registry) { return answering.points }
        return try ConflictAnalysis(contested).points
    }

    /// Writes the resolution a person chose, one answer per conflict point of `conflictPoints(of:registry:)`.
    ///
    /// Answers go to the resolver whose points they are (keyed by id or, for
    /// a structured document, by path); everything that resolver merged
    /// cleanly is kept. The resolution's parents are every head; the result
    /// names the resolver `person` (`personResolverName`).
    @discardableResult
    public func resolve(
        _ key: DocumentKey, answers: [String: HunkAnswer], registry: ResolverRegistry, device: String? = nil
    ) async throws(TruceError) -> ResolveResult {
        let device = try author(device)
        let conflict = try conflictSet(of: key)
        let contested = try contested(conflict)
        guard let answering = try await answeringResolver(for: contested, registry: registry) else {
            return try writePersonal(conflict, content: try ConflictAnalysis(contested).applying(answers), device: device)
        }
        let resolver = answering.resolver
        let content = try await Self.running(resolver.name, timeout: answering.timeout) { [self] deadline in
            try await resolver.applying(
                answers, to: contested, context: resolutionContext(for: contested, options: answering.options, deadline: deadline))
        }
        return try writePersonal(conflict, content: content, device: device)
    }

    private func answeringResolver(for conflict: ConflictSet, registry: ResolverRegistry) async throws(TruceError)
        -> (resolver: any PointAnsweringResolver, options: ResolverOptions, timeout: Double, points: [ConflictPoint])?
    {
        let choice = try resolverChoice(for: conflict.key, registry: registry)
        for name in choice.chain {
            guard let resolver = choice.resolvers[name] as? any PointAnsweringResolver else { continue }
            let options = choice.options[name] ?? ResolverOptions(resolverName: name)
            let timeout = choice.timeout(of: name)
            let points = try await Self.running(name, timeout: timeout) { [self] deadline in
                try await resolver.conflictPoints(of: conflict, context: resolutionContext(for: conflict, options: options, deadline: deadline))
            }
            if let points { return (resolver, options, timeout, points) }
        }
        return nil
    }

    /// Settles `key` with one resolver given directly, bypassing config: `store.resolve(key, using: OverwriteWithCurrent())`.
    ///
    /// `options` are what the resolver gets, in place of the
    /// `resolver.<name>.<option>` lines of config (nil: those lines). The
    /// delete-conflict policy still comes from config. The call can use no
    /// other resolver, so a fallback those options name is skipped, and the
    /// result's reasons say so: it never fails the resolver that was given.
    /// A document in no conflict is handled as `resolve(_:registry:resolverName:device:dryRun:)` handles it.
    public func resolve(
        _ key: DocumentKey, using resolver: any Resolver, options: ResolverOptions? = nil, device: String? = nil,
        dryRun: Bool = false
    ) async throws(TruceError) -> ResolveResult {
        try await resolve(key, device: author(device), dryRun: dryRun) { () throws(TruceError) in
            try resolverChoice(
                for: key, registry: ResolverRegistry([resolver]), explicit: resolver.name, options: options,
                skippingUnavailable: true)
        }
    }

    /// Writes the resolution a person chose, one answer per conflict point.
    ///
    /// The points are those of `contestedConflictSet(of:)`; the resolution's parents are every head, and the result
    /// names the resolver `person`.
    @discardableResult
    public func resolve(_ key: DocumentKey, answers: [String: HunkAnswer], device: String? = nil) throws(TruceError) -> ResolveResult {
        let device = try author(device)
        let conflict = try conflictSet(of: key)
        let content = try ConflictAnalysis(contested(conflict)).applying(answers)
        return try writePersonal(conflict, content: content, device: device)
    }

    /// Writes the resolution a person made as a whole file (nil: settle as a deletion); the result names the resolver `person`.
    @discardableResult
    public func resolve(_ key: DocumentKey, content: Data?, device: String? = nil) throws(TruceError) -> ResolveResult {
        try writePersonal(try conflictSet(of: key), content: content, device: author(device))
    }

    /// The resolver name a person's resolution records in `Resolved-By:`.
    public static let personResolverName = "person"

    /// The resolver name of a resolution that merges heads holding identical content into one.
    public static let identicalContentResolverName = "identical-content"

    private func writePersonal(_ conflict: ConflictSet, content: Data?, device: String) throws(TruceError) -> ResolveResult {
        if let content, let problem = OutputValidation.problem(with: content, for: conflict.key) {
            throw .invalidAnswer("the resolution of \(conflict.key) is \(problem); nothing was written")
        }
        return try write(conflict, settlement: .content(content), resolver: Self.personResolverName, device: device)
    }
}

extension ResolverChoice {
    /// The seconds `name` may run: its `resolver.<name>.timeout`, else its `defaultTimeout`.
    func timeout(of name: String) -> Double {
        timeouts[name] ?? resolvers[name]?.defaultTimeout ?? DocumentStore.defaultResolverTimeout
    }
}
