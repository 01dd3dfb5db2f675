import TruceCore

/// Keeps the current version and resolves every other head: the iCloud seed's policy.
///
/// The resolution has the current version's tree, like `git merge -s ours`.
public struct OverwriteWithCurrent: Resolver {
    public let name = "overwrite-with-current"

    public init() {}

    public func resolve(_ conflict: ConflictSet, context: ResolutionContext) async throws -> ResolutionOutcome {
        .kept(conflict.current.version.id)
    }
}
