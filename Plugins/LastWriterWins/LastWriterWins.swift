import Foundation
import TruceCore

/// The latest author date wins, ties broken alike on every replica; with `granularity = key`, key by key.
///
/// Options (`resolver.last-writer-wins.<option>`): `granularity` is
/// `document` (default: the latest head wins whole) or `key` (JSON objects and
/// property-list dictionaries merged top-level key by key against the base,
/// the iCloud key-value store's rule). "Latest" is the store's current-version
/// rule (the later author date, on a tie the larger version id), so the head
/// kept whole is always the current version.
public struct LastWriterWins: Resolver {
    /// What one decision covers.
    enum Granularity: String, Sendable, CaseIterable {
        /// The whole document: the latest head is kept as it is.
        case document
        /// Each top-level key of a JSON object or property-list dictionary.
        case key
    }

    public let name = "last-writer-wins"

    public init() {}

    public func validate(options: ResolverOptions) throws {
        _ = try options.choice("granularity", default: Granularity.document)
    }

    public func resolve(_ conflict: ConflictSet, context: ResolutionContext) async throws -> ResolutionOutcome {
        switch try context.options.choice("granularity", default: Granularity.document) {
        case .document:
            return .kept(Self.latest(conflict.heads).version.id)
        case .key:
            if let deleted = conflict.heads.first(where: { $0.content == nil }) {
                return .pass(reason: "version \(deleted.version.id.short) is a deletion, which has no keys to merge")
            }
            return .resolved(content: try KeyedMerge(conflict).merged())
        }
    }

    /// The head that wins: the one the current-version rule puts first.
    static func latest(_ heads: [ConflictSet.Side]) -> ConflictSet.Side {
        heads.max { isEarlier($0.version, than: $1.version) }!
    }

    /// True when `rhs` wins over `lhs` by the current-version rule.
    static func isEarlier(_ lhs: Version, than rhs: Version) -> Bool { rhs.isMoreCurrent(than: lhs) }
}
