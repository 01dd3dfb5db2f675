import Foundation

// The forms adopters wrote against earlier releases, kept for one release with what replaces each (CHANGELOG.md
// says why). None of them is used inside the package.

extension DocumentStore {
    /// The device of a call that names none, as earlier releases read it.
    @available(*, deprecated, renamed: "defaultDevice", message: "the library no longer reads $TRUCE_DEVICE: give the device at open")
    public static var fallbackDevice: String { defaultDevice }

    /// Exchanges versions with another store on the calling thread.
    @available(*, deprecated, message: "use `try await sync(with:)`: a sync waits on the network, so it is async")
    public func sync(with remote: String) throws(TruceError) -> SyncReport {
        try syncOnCallingThread(with: remote)
    }

    /// Exchanges versions and settles what stays in conflict with `registry`.
    @available(*, deprecated, renamed: "sync(with:resolving:registry:device:progress:)")
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
    @available(*, deprecated, message: "use `try await importDocuments(from:device:date:progress:)`")
    @_disfavoredOverload
    public func importDocuments(
        from source: ImportSource, device: String? = nil, date: Date = Date(), progress: ((Int, Int) -> Void)? = nil
    ) throws(TruceError) -> ImportReport {
        nonisolated(unsafe) let progress = progress
        return try Importing(access: access, author: author(device), date: date).run(
            source, progress: { progress?($0, $1) }, saving: nil, cancellation: nil)
    }

    /// Exports on the calling thread.
    @available(*, deprecated, message: "use `try await exportDocuments(to:versionAt:overwrite:progress:)`")
    @_disfavoredOverload
    public func exportDocuments(to path: String, versionAt date: Date? = nil, overwrite: Bool = false) throws(TruceError) -> ExportReport {
        try Exporting(access: access).run(to: path, versionAt: date, overwrite: overwrite, progress: nil, cancellation: nil)
    }

    /// The line hunks of the contested conflict set, whatever resolver the document is routed to.
    @available(
        *, deprecated,
        message:
            "use `try await conflictPoints(of:)`, which asks the routed resolver for its points; `ConflictAnalysis(contestedConflictSet(of:)).points` gives line hunks"
    )
    @_disfavoredOverload
    public func conflictPoints(of key: DocumentKey) throws(TruceError) -> [ConflictPoint] {
        try ConflictAnalysis(resolving().contestedConflictSet(of: key)).points
    }

    /// Writes a person's answers to the line hunks, whatever resolver the document is routed to.
    @available(*, deprecated, message: "use `try await resolve(_:answers:device:)`, which gives the answers to the routed resolver's points")
    @discardableResult @_disfavoredOverload
    public func resolve(_ key: DocumentKey, answers: [String: HunkAnswer], device: String? = nil) throws(TruceError) -> ResolveResult {
        try resolving().resolveLineHunks(key, answers: answers, device: author(device))
    }

    /// Writes a person's whole file on the calling thread.
    @available(*, deprecated, message: "use `try await resolve(_:content:device:)`: every form of resolve is async")
    @discardableResult @_disfavoredOverload
    public func resolve(_ key: DocumentKey, content: Data?, device: String? = nil) throws(TruceError) -> ResolveResult {
        try resolving().resolve(key, content: content, device: author(device))
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
