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

    /// The document with `answers` given and the points still open drawn between conflict markers, for a person
    /// answering (`ResolutionSession.preview(style:)`); nil when the resolver cannot draw them. Has a default: nil.
    func preview(_ answers: [String: HunkAnswer], of conflict: ConflictSet, markers: PreviewMarkers, context: ResolutionContext) async throws
        -> Data?
}

/// How a resolver that lists its own points draws the ones still open, for a person answering.
public struct PreviewMarkers: Sendable, Equatable {
    /// The conflict style: `diff3` and `zdiff3` show the base's value too.
    public var style: TextMergeOptions.ConflictStyle
    /// Each head's label (device, date, short id), current first.
    public var labels: [String]
    /// The base's label.
    public var baseLabel: String

    /// Markers in `style`, labelled.
    public init(style: TextMergeOptions.ConflictStyle = .merge, labels: [String], baseLabel: String) {
        self.style = style
        self.labels = labels
        self.baseLabel = baseLabel
    }
}

extension PointAnsweringResolver {
    /// The document with `answers` given and the points still open between conflict markers; nil when the resolver
    /// cannot draw them (the default), and a session then shows the current version's value at each open point.
    public func preview(
        _ answers: [String: HunkAnswer], of conflict: ConflictSet, markers: PreviewMarkers, context: ResolutionContext
    ) async throws -> Data? {
        nil
    }
}
