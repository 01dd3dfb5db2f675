import Foundation

// The forms adopters wrote against earlier releases, kept for one release with what replaces each (CHANGELOG.md
// says why). None of them is used inside the package.

extension DocumentStore {
    /// Opens the store at `url`, creating it when the directory is missing or empty; calls without `device:` are by `device`.
    ///
    /// The `async` form of opening, which never had anything to await.
    @available(
        *, deprecated,
        message:
            "use `try DocumentStore(directory: url, device: device, resolvers: resolvers)`: opening is synchronous, one initializer for every case"
    )
    public convenience init(at url: URL, device: String, resolvers: ResolverRegistry) async throws(TruceError) {
        try self.init(directory: url, device: device, resolvers: resolvers, mode: .openOrCreate)
    }

    /// Creates a store in a new or empty directory.
    @available(
        *, deprecated,
        message:
            "use `try DocumentStore(directory: URL(fileURLWithPath: path), device: device, resolvers: resolvers, mode: .createNew, saveLog: saveLog)`"
    )
    public static func create(
        at path: String, device: String? = nil, saveLog: Bool = true, resolvers: ResolverRegistry
    ) throws(TruceError) -> DocumentStore {
        try DocumentStore(path: path, device: device, resolvers: resolvers, mode: .createNew, saveLog: saveLog)
    }

    /// Opens an existing store; fails when `path` is missing or is not a Truce store.
    @available(
        *, deprecated,
        message: "use `try DocumentStore(directory: URL(fileURLWithPath: path), device: device, resolvers: resolvers, mode: .openExisting)`"
    )
    public static func open(at path: String, device: String? = nil, resolvers: ResolverRegistry) throws(TruceError) -> DocumentStore {
        try DocumentStore(path: path, device: device, resolvers: resolvers, mode: .openExisting, saveLog: true)
    }

    /// The device of a call that names none, as earlier releases read it.
    @available(*, deprecated, renamed: "defaultDevice", message: "the library no longer reads $TRUCE_DEVICE: give the device at open")
    public static var fallbackDevice: String { defaultDevice }

    /// Exchanges versions with another store on the calling thread.
    @available(*, deprecated, message: "use `try await sync(with:)`: a sync waits on the network, so it is async")
    public func sync(with remote: String) throws(TruceError) -> SyncReport {
        try syncOnCallingThread(with: remote)
    }

    /// Exchanges versions and settles what stays in conflict with `registry` (nil: settles nothing).
    ///
    /// `resolving:` takes a `Bool` now and the registry moved to `registry:`,
    /// which may be left out when the store was opened with the resolvers.
    @available(
        *, deprecated,
        message:
            "use `sync(with:resolving: true, registry: registry)` (or `resolving: false` where the registry was nil); without `registry:` the store's resolvers, given at open, are used"
    )
    public func sync(
        with remote: String, resolving registry: ResolverRegistry?, device: String? = nil,
        progress: (@Sendable (SyncReport.Traffic) -> Void)? = nil
    ) async throws(TruceError) -> SyncReport {
        try await sync(with: remote, resolving: registry != nil, registry: registry, device: device, progress: progress)
    }

    /// Reclaims space on the calling thread.
    @available(*, deprecated, message: "use `try await prune(expire:progress:)`: a repack grows with the store, so it is async")
    @discardableResult @_disfavoredOverload
    public func prune(expire: TimeInterval = Expiry.defaultGrace, progress: (@Sendable (String) -> Void)? = nil) throws(TruceError) -> PruneReport {
        try access.prune(expire: expire, progress: progress, cancellation: nil)
    }

    /// Saves many versions as one pack on the calling thread.
    @available(*, deprecated, message: "use `try await saveBatch(_:progress:)`: a batch grows with its saves, so it is async")
    @_disfavoredOverload
    public func saveBatch(_ saves: [BatchSave]) throws(TruceError) -> [VersionID] {
        try saveBatch(saves, cancellation: nil)
    }

    /// Imports on the calling thread.
    @available(*, deprecated, message: "use `try await importDocuments(_:device:date:progress:)`: an import grows with its source, so it is async")
    @_disfavoredOverload
    public func importDocuments(
        from source: ImportSource, device: String? = nil, date: Date = Date(), progress: ((Int, Int) -> Void)? = nil
    ) throws(TruceError) -> ImportReport {
        nonisolated(unsafe) let progress = progress
        return try Importing(access: access, author: author(device), date: date).run(
            source, progress: { progress?($0, $1) }, saving: nil, cancellation: nil)
    }

    /// Exports on the calling thread.
    @available(
        *, deprecated, message: "use `try await exportDocuments(into:versionAt:overwrite:progress:)`: an export grows with the store, so it is async"
    )
    @_disfavoredOverload
    public func exportDocuments(to path: String, versionAt date: Date? = nil, overwrite: Bool = false) throws(TruceError) -> ExportReport {
        try Exporting(access: access).run(to: path, versionAt: date, overwrite: overwrite, progress: nil, cancellation: nil)
    }

    /// The line hunks of the contested conflict set, whatever resolver the document is routed to.
    ///
    /// Reachable from `async` code as from synchronous code: no `async`
    /// overload has these labels.
    @available(
        *, deprecated,
        message:
            "`ConflictAnalysis(contestedConflictSet(of:)).points` gives these line hunks; `try await conflictPoints(for:)` asks the routed resolver for its points"
    )
    public func conflictPoints(of key: DocumentKey) throws(TruceError) -> [ConflictPoint] {
        try ConflictAnalysis(resolving().contestedConflictSet(of: key)).points
    }

    /// The points the chain config picks offers with `registry`'s resolvers.
    @available(*, deprecated, renamed: "conflictPoints(for:registry:)")
    public func conflictPoints(of key: DocumentKey, registry: ResolverRegistry) async throws(TruceError) -> [ConflictPoint] {
        try await conflictPoints(for: key, registry: registry)
    }

    /// Writes a person's answers to the line hunks, whatever resolver the document is routed to.
    ///
    /// Reachable from `async` code as from synchronous code: no `async`
    /// overload has these labels.
    @available(
        *, deprecated,
        message:
            "use `try await resolve(_:answering:)`, which gives the answers to the routed resolver's points (line hunks unless the routing names a resolver with points of its own)"
    )
    @discardableResult
    public func resolve(_ key: DocumentKey, answers: [String: HunkAnswer], device: String? = nil) throws(TruceError) -> ResolveResult {
        try resolving().resolveLineHunks(key, answers: answers, device: author(device))
    }

    /// Writes a person's answers to the points of the chain config picks with `registry`'s resolvers.
    @available(*, deprecated, renamed: "resolve(_:answering:registry:device:)")
    @discardableResult
    public func resolve(
        _ key: DocumentKey, answers: [String: HunkAnswer], registry: ResolverRegistry, device: String? = nil
    ) async throws(TruceError) -> ResolveResult {
        try await resolve(key, answering: answers, registry: registry, device: device)
    }

    /// Writes a person's whole file on the calling thread.
    ///
    /// Reachable from `async` code as from synchronous code: no `async`
    /// overload has these labels.
    @available(*, deprecated, message: "use `try await resolve(_:to:)`: every form of resolve is async")
    @discardableResult
    public func resolve(_ key: DocumentKey, content: Data?, device: String? = nil) throws(TruceError) -> ResolveResult {
        try resolving().resolve(key, content: content, device: author(device))
    }

    /// Writes `content` as a new version of `key` and returns the version, as 0.1.0's `save` did.
    ///
    /// Picked only where a `Version` is expected (a function that returns
    /// one, `let v: Version = try store.save(…)`); everywhere else `save`
    /// returns a `SaveResult`.
    @available(*, deprecated, message: "`save` returns a `SaveResult`: write `try store.save(…).version` where a `Version` is needed")
    @discardableResult @_disfavoredOverload
    public func save(_ content: Data, to key: DocumentKey, device: String? = nil, base: VersionID? = nil, date: Date = Date()) throws(TruceError)
        -> Version
    {
        try save(content, to: key, device: device, base: base, date: date, allowingFutureDate: false).version
    }

    /// Writes a deletion of `key` and returns its version, as 0.1.0's `delete` did.
    ///
    /// Picked only where a `Version` is expected; everywhere else `delete`
    /// returns a `SaveResult`.
    @available(*, deprecated, message: "`delete` returns a `SaveResult`: write `try store.delete(…).version` where a `Version` is needed")
    @discardableResult @_disfavoredOverload
    public func delete(_ key: DocumentKey, device: String? = nil, base: VersionID? = nil, date: Date = Date()) throws(TruceError) -> Version {
        try delete(key, device: device, base: base, date: date, allowingFutureDate: false).version
    }
}

extension ResolverChoice {
    /// The `merge` attribute that decided, as `git check-attr merge` prints it.
    @available(*, deprecated, message: "use `explain(_:).mergeAttribute`")
    public var attribute: String { mergeAttribute.description }
}

/// A position in a store's change history.
@available(*, deprecated, renamed: "ChangeHistory.Token")
public typealias ChangeToken = ChangeHistory.Token

/// A range of lines of a conflict point.
@available(*, deprecated, renamed: "ConflictPoint.LineRange")
public typealias LineRange = ConflictPoint.LineRange
