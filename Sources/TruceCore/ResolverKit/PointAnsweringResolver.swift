import Foundation

/// A resolver whose conflict points are its own (places in a document's structure, not hunks of lines) and that
/// settles them with a person's answers.
///
/// `conflicts` lists the points of the first resolver of a document's chain
/// that is one of these and applies to the conflict; a person's `--take`
/// answers go back to the same resolver. Any other chain gets line hunks.
public protocol PointAnsweringResolver: Resolver {
    /// The points a person must decide (empty when it merges cleanly); nil when the resolver does not apply (it would pass).
    ///
    /// It runs under the same deadline as `resolve(_:context:)`.
    func conflictPoints(of conflict: ConflictSet, context: ResolutionContext) async throws -> [ConflictPoint]?

    /// The document with every point answered, keyed by point id or path (nil: settled as a deletion).
    func applying(_ answers: [String: HunkAnswer], to conflict: ConflictSet, context: ResolutionContext) async throws -> Data?
}
