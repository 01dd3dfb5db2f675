import Foundation

/// A resolver that can put back, at one place, a value it dropped: what ``DocumentStore/restore(_:registry:device:)`` asks
/// of it for a decision at a `point`.
///
/// A decision about the whole document needs no resolver: the store brings
/// the dropped version's content back itself. A value at a place (a key of a
/// JSON object, a record of a collection) can only be put back by code that
/// knows the document's format, so the store asks the resolver the
/// resolution names (`Resolved-By:`), found in the store's registry. It runs
/// under the resolver's timeout, as `resolve` does, and its output passes the
/// same validation before anything is written.
public protocol RestoringResolver: Resolver {
    /// The content of `current` with the value `dropped` holds at `point` put back in place of the one there now
    /// (nil: the document deleted).
    ///
    /// `point` is what this resolver recorded as the decision's place.
    /// Read the value from `dropped` itself: the commit holds only the first
    /// bytes of a long value. When `dropped` has nothing at `point` (it
    /// removed a key), remove it from `current`. Throw when `current` no
    /// longer has a shape the value fits (it is no longer a JSON object, say).
    func restoring(_ point: String, from dropped: ConflictSet.Side, into current: ConflictSet.Side, context: ResolutionContext) async throws
        -> Data?
}
