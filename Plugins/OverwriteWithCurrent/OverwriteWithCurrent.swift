import TruceCore

/// Keeps the current version and resolves every other head: the iCloud seed's policy.
///
/// The resolution has the current version's tree, like `git merge -s ours`,
/// and records that every other head was dropped whole.
public struct OverwriteWithCurrent: Resolver {
    public let name = "overwrite-with-current"

    public init() {}

    public func resolve(_ conflict: ConflictSet, context: ResolutionContext) async throws -> ResolutionOutcome {
        context.record(
            .wholeDocument(rule: "the current version is kept", kept: conflict.current.version, dropped: conflict.conflicts.map(\.version)))
        return .kept(conflict.current.version.id)
    }
}
