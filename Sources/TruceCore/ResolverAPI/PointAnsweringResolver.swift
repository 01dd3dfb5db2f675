import Foundation

/// A resolver whose conflict points are its own (places in a document's structure, not hunks of lines) and that
/// settles them with a person's answers.
///
/// `conflictPoints(for:)`, `truce conflicts` and a session list the points
/// of the first resolver of a document's chain that is one of these and
/// applies to the conflict; a person's answers (`resolve(_:answering:)`,
/// `--take`, a session) go back to the same resolver. Any other chain gets
/// line hunks. <doc:WritingAResolver> has a worked example.
public protocol PointAnsweringResolver: Resolver {
    /// The points a person must decide (empty when it merges cleanly); nil when the resolver does not apply (it would pass).
    ///
    /// It runs under the same deadline as `resolve(_:context:)`. The points'
    /// ids must be a function of the conflict, so that `applying` finds the
    /// same ones. Their `base` and sides' `text` are in a form of the
    /// resolver's choosing, which the store shows and hands back but never
    /// parses (`structured`: the value's JSON text).
    func conflictPoints(of conflict: ConflictSet, context: ResolutionContext) async throws -> [ConflictPoint]?

    /// The document with every point answered (nil: settled as a deletion).
    ///
    /// `answers` are keyed as the caller keyed them: by point id (a session,
    /// a replayed recorded answer) or by whatever a person wrote, an id or a
    /// path; accept both. `.text` holds a replacement in the form of the
    /// sides' text (a recorded answer comes back as `.text` of what it put
    /// there). An answer that does not fit, a key that names no point, or a
    /// point left unanswered throws `TruceError.invalidAnswer`, which reaches
    /// the caller as bad input with nothing written; any other error is
    /// reported as `TruceError.resolverFailed`.
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
