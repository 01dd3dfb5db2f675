import TruceCore

/// git's union merge: where heads changed the same lines, keep every head's lines, current first.
public struct UnionMerge: Resolver {
    public let name = "union"

    public init() {}

    public func resolve(_ conflict: ConflictSet, context: ResolutionContext) async throws -> ResolutionOutcome {
        switch try conflict.foldTextMerge(options: TextMergeOptions(favor: .union)) {
        case .merged(let content): .resolved(content: content)
        case .conflicted(let count): .pass(reason: "\(count) conflicts remained after a union merge")
        case .notApplicable(let reason): .pass(reason: reason)
        }
    }
}
