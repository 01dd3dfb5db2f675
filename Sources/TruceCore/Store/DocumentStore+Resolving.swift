import Foundation

/// Settling conflicts: by the resolver chain config picks, by one resolver given directly, or by a person's answers;
/// and turning a resolution back into its conflict.
extension DocumentStore {
    /// The resolver name a person's resolution records in `Resolved-By:`.
    public static let personResolverName = ResolverNames.person

    /// The resolver name of a resolution that merges heads holding identical content into one.
    public static let identicalContentResolverName = ResolverNames.identicalContent

    /// Seconds a resolver may run when neither `resolver.<name>.timeout` nor the resolver's `defaultTimeout` says.
    public static let defaultResolverTimeout = ResolverTimeouts.default

    /// The timeouts `resolver.<name>.timeout` may set, in seconds: from a tenth of a second to a day.
    public static let resolverTimeoutRange = ResolverTimeouts.range

    /// The conflict set of a document in conflict: every head and the base, with their bytes.
    public func conflictSet(of key: DocumentKey) throws(TruceError) -> ConflictSet {
        try resolving().conflictSet(of: key)
    }

    /// The conflict a person decides: under modify-wins with several edited heads only those, otherwise every head.
    ///
    /// `conflictPoints(for:)`, a resolver chain that needs a person, and a
    /// person's answers all use this set, so the points one lists are the
    /// points the other accepts.
    public func contestedConflictSet(of key: DocumentKey) throws(TruceError) -> ConflictSet {
        try resolving().contestedConflictSet(of: key)
    }

    /// The resolver chain for `key`: `explicit` when given, else the one the synced routing, `info/attributes` and
    /// config pick (see `ResolverChoice`), with the store's resolvers unless `registry` is given.
    public func resolverChoice(for key: DocumentKey, registry: ResolverRegistry? = nil, explicit: String? = nil) throws(TruceError)
        -> ResolverChoice
    {
        try resolving(registry).resolverChoice(for: key, explicit: explicit)
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
        try await resolving(registry).conflictPoints(of: key)
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
        try await resolving(registry).resolve(key, resolverName: resolverName, device: author(device), dryRun: dryRun)
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
        try await resolving().resolve(key, using: resolver, options: options, device: author(device), dryRun: dryRun)
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
        try await resolving(registry).resolve(key, answers: answers, device: author(device))
    }

    /// Writes the resolution a person made as a whole file, `content` (nil: settle as a deletion); the result names
    /// the resolver `person`.
    ///
    /// Labelled `to:` so that it is not an `async` overload of 0.1.0's
    /// synchronous `resolve(_:content:device:)`.
    @discardableResult
    public func resolve(_ key: DocumentKey, to content: Data?, device: String? = nil) async throws(TruceError) -> ResolveResult {
        try resolving().resolve(key, content: content, device: author(device))
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
    /// and writes nothing. The resolvers are the store's unless `registry` is given; which of them settles each
    /// document is decided by the store's config and attributes as the call reads them when it starts.
    public func resolveAll(
        _ requested: [DocumentKey]? = nil, registry: ResolverRegistry? = nil, resolverName: String? = nil, device: String? = nil,
        progress: (@Sendable (_ done: Int, _ total: Int) -> Void)? = nil
    ) async throws(TruceError) -> [DocumentKey: ResolveResult] {
        try await resolving(registry).resolveAll(requested, resolverName: resolverName, device: author(device), progress: progress)
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
        try resolving().reopen(key, author: author(device))
    }
}
