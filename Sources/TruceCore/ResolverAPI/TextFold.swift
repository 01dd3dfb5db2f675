import Foundation

/// The result of folding every head of a conflict set into one text with three-way merges.
public enum TextFold: Sendable {
    /// Every merge was clean (or settled by the favor); here is the text.
    case merged(Data)
    /// A merge left conflict hunks.
    case conflicted(conflictCount: Int)
    /// Text merging does not apply; the reason says why (binary content, a deletion, no base).
    case notApplicable(String)
}

extension ConflictSet {
    /// Merges the heads pairwise in the deterministic head order: current first, then each conflict version.
    ///
    /// Step i merges head i into the result of heads 0..<i against the merge
    /// base of head i and those heads (`git merge-base head_i head_0 … head_i-1`),
    /// the base git's octopus merge uses for the same step.
    public func foldTextMerge(options: TextMergeOptions) throws(TruceError) -> TextFold {
        guard base != nil else { return .notApplicable("the heads have no common base") }
        guard var result = current.content else { return .notApplicable("the current version is a deletion") }
        var merged = [current.version.id]
        for other in conflicts {
            guard let theirs = other.content else { return .notApplicable("version \(other.version.id.short) is a deletion") }
            guard let stepBase = try mergeBase(of: other.version.id, and: merged) else {
                return .notApplicable("version \(other.version.id.short) shares no base with the others")
            }
            guard let baseContent = stepBase.content else { return .notApplicable("the base \(stepBase.version.id.short) is a deletion") }
            guard let step = try TextMerge.merge(base: baseContent, ours: result, theirs: theirs, options: options) else {
                return .notApplicable("binary content")
            }
            guard step.isClean else { return .conflicted(conflictCount: step.conflictCount) }
            result = step.content
            merged.append(other.version.id)
        }
        return .merged(result)
    }
}
