import Foundation
import TruceCore

/// The latest author date wins, ties broken alike on every replica; with `granularity = key`, key by key.
///
/// It records what it dropped: with `document`, every other head whole; with
/// `key`, per key that several heads changed differently, the value kept and
/// the values replaced (places are JSON Pointers, `/theme`), which
/// `restoring(_:from:into:context:)` can put back one at a time.
///
/// Options (`resolver.last-writer-wins.<option>`): `granularity` is
/// `document` (default: the latest head wins whole) or `key` (merged key by
/// key against the base, the iCloud key-value store's rule: JSON objects at
/// every depth, written as the current version's bytes with only the changed
/// values replaced; property-list dictionaries by their top-level keys). "Latest" is the store's current-version
/// rule (the later author date, on a tie the larger version id), so the head
/// kept whole is always the current version.
public struct LastWriterWins: RestoringResolver {
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
            let latest = Self.latest(conflict.heads).version
            context.record(
                .wholeDocument(rule: Self.rule, kept: latest, dropped: conflict.heads.map(\.version).filter { $0.id != latest.id }))
            return .kept(latest.id)
        case .key:
            if let deleted = conflict.heads.first(where: { $0.content == nil }) {
                return .pass(reason: "version \(deleted.version.id.short) is a deletion, which has no keys to merge")
            }
            let (content, decisions) = try KeyedMerge(conflict).merged()
            for decision in decisions { context.record(decision) }
            return .resolved(content: content)
        }
    }

    /// Puts back the value the dropped head held at a key (`/theme`, `/editor/font` in JSON), or removes the key when it
    /// had none; every other byte of the current version stays.
    public func restoring(_ point: String, from dropped: ConflictSet.Side, into current: ConflictSet.Side, context: ResolutionContext)
        async throws -> Data?
    {
        let key = current.version.key
        let tokens = KeyedMerge.tokens(of: point)
        guard current.content != nil else {
            throw TruceError.resolverFailed(name, reason: "the current version of \(key) is a deletion, which has no keys")
        }
        let kind = KeyedDocument.kind(of: key, sample: current.content ?? Data())
        if kind == .json, !tokens.isEmpty {
            // Both read as JSON objects first, so that the in-place edit reads valid JSON.
            _ = try KeyedDocument(current, kind: kind, key: key)
            _ = try KeyedDocument(dropped, kind: kind, key: key)
            guard let content = KeyedJSONMerge.restoring(tokens, from: dropped.content ?? Data(), into: current.content ?? Data()) else {
                throw TruceError.resolverFailed(name, reason: "the current version of \(key) has no object to hold \(point)")
            }
            return content
        }
        guard tokens.count == 1, let member = tokens.first else {
            throw TruceError.resolverFailed(name, reason: "\(point) is not a top-level key, the only places it decides")
        }
        let document = try KeyedDocument(current, kind: kind, key: key)
        var entries = document.entries
        entries[member] = try KeyedDocument(dropped, kind: kind, key: key).entries[member]
        return try document.serialized(entries)
    }

    /// The reason each decision records.
    static let rule = "the latest change wins"

    /// The head that wins: the one the current-version rule puts first.
    static func latest(_ heads: [ConflictSet.Side]) -> ConflictSet.Side {
        heads.max { isEarlier($0.version, than: $1.version) }!
    }

    /// True when `rhs` wins over `lhs` by the current-version rule.
    static func isEarlier(_ lhs: Version, than rhs: Version) -> Bool { rhs.isMoreCurrent(than: lhs) }
}
