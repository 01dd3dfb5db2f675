import TruceCore

/// libgit2's three-way text merge against the base; N heads are folded pairwise, current first.
///
/// Options (`resolver.three-way.<option>` in the store's config): `style`
/// (`merge`, `diff3`, `zdiff3`), `markerSize` (1–1024), `diffAlgorithm`
/// (`myers`, `minimal`, `patience`). Overlapping edits need a person; binary
/// content, a deletion or an absent base pass to the fallback.
public struct ThreeWayMerge: Resolver {
    public let name = "three-way"

    public init() {}

    public func validate(options: ResolverOptions) throws {
        _ = try mergeOptions(options)
    }

    public func resolve(_ conflict: ConflictSet, context: ResolutionContext) async throws -> ResolutionOutcome {
        let mergeOptions = try mergeOptions(context.options)
        switch try conflict.foldTextMerge(options: mergeOptions) {
        case .merged(let content):
            return .resolved(content: content)
        case .conflicted:
            return .needsPerson(try ConflictAnalysis(conflict, algorithm: mergeOptions.diffAlgorithm).points)
        case .notApplicable(let reason):
            return .pass(reason: reason)
        }
    }

    func mergeOptions(_ options: ResolverOptions) throws(TruceError) -> TextMergeOptions {
        TextMergeOptions(
            style: try options.choice("style", default: TextMergeOptions.ConflictStyle.merge),
            markerSize: try options.integer("markerSize", default: 7, in: 1...1024),
            diffAlgorithm: try options.choice("diffAlgorithm", default: TextMergeOptions.DiffAlgorithm.myers)
        )
    }
}
