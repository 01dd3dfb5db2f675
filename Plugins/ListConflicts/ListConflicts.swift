import TruceCore

/// Never decides: returns the conflict points for a person to answer.
public struct ListConflicts: Resolver {
    public let name = "list-conflicts"

    public init() {}

    public func resolve(_ conflict: ConflictSet, context: ResolutionContext) async throws -> ResolutionOutcome {
        .needsPerson(try ConflictAnalysis(conflict).points)
    }
}
