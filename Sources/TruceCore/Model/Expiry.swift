import Foundation

// @usableFromInline: `defaultGrace` is the default argument of the public `prune(expire:)`, which callers inline.
/// How long prune keeps what nothing needs.
@usableFromInline package enum Expiry {
    /// The default grace period before prune may drop what nothing needs: two weeks.
    @usableFromInline package static let defaultGrace: TimeInterval = 14 * 24 * 3600
}
