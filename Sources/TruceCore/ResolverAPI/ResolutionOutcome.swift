import Foundation

/// What a resolver decided.
public enum ResolutionOutcome: Sendable {
    /// Settled with new content; nil content settles the conflict as a deletion.
    case resolved(content: Data?)
    /// Settled by keeping one head exactly as it is (its tree becomes the resolution's tree).
    case kept(VersionID)
    /// Only a person can settle it; these are the points to decide.
    case needsPerson([ConflictPoint])
    /// This resolver does not apply (binary content, no base, …): the chain's next resolver runs.
    case pass(reason: String)
}
