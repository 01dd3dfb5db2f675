import Foundation
import TruceCore

/// Collections of records (a JSON array of objects, or JSON Lines): the union of every head, one record per key.
///
/// Options (`resolver.deduplicate.<option>`): `key` (required) names the
/// field that identifies a record; `keep` picks the record that stays when
/// several share a key: `smallest-key` (default), `latest:<field>` or
/// `smallest:<field>`. Records keep the order in which their key first
/// appears: the current version's records in its order, then each conflict
/// version's new ones in head order. Keys ending in `.jsonl` or `.ndjson` are
/// JSON Lines; any other key is a JSON array.
///
/// Where records with one key differ, it records a decision at
/// `<key field>=<key value as JSON>` (`uuid="7f3c"`): the record kept and each
/// one merged away, which `restoring(_:from:into:context:)` can put back.
public struct Deduplicate: RestoringResolver {
    /// Which of several records with the same key stays.
    enum KeepRule: Sendable, Equatable {
        /// The record whose canonical JSON (keys sorted) sorts first: needs no field, and every replica picks alike.
        case smallestKey
        /// The record with the largest value of the field (numbers by value, strings by order, so ISO 8601 dates by time).
        case latest(field: String)
        /// The record with the smallest value of the field, as Apple's CloudKit sample keeps the smallest uuid.
        case smallest(field: String)

        /// Reads `smallest-key`, `latest:<field>` or `smallest:<field>`; nil for anything else.
        init?(_ text: String) {
            let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
            switch (parts.first?.lowercased(), parts.count) {
            case ("smallest-key", 1): self = .smallestKey
            case ("latest", 2) where !parts[1].isEmpty: self = .latest(field: parts[1])
            case ("smallest", 2) where !parts[1].isEmpty: self = .smallest(field: parts[1])
            default: return nil
            }
        }
    }

    public let name = "deduplicate"

    public init() {}

    public func validate(options: ResolverOptions) throws {
        _ = try settings(options)
    }

    public func resolve(_ conflict: ConflictSet, context: ResolutionContext) async throws -> ResolutionOutcome {
        let (field, rule) = try settings(context.options)
        if let deleted = conflict.heads.first(where: { $0.content == nil }) {
            return .pass(reason: "version \(deleted.version.id.short) is a deletion, which has no records to merge")
        }
        let collections = try conflict.heads.map { try RecordCollection($0, key: conflict.key) }
        var order: [String] = []
        var groups: [String: [(record: Record, version: Version)]] = [:]
        for (head, collection) in zip(conflict.heads, collections) {
            for record in collection.records {
                // A record without the key field can only collapse with an identical one.
                let identity = record.fields[field].map { "k" + Record.canonical($0) } ?? "r" + record.canonical
                if groups[identity] == nil { order.append(identity) }
                groups[identity, default: []].append((record, head.version))
            }
        }
        let kept = order.map { identity in groups[identity]!.min { rule.prefers($0.record, over: $1.record) }! }
        for (identity, stays) in zip(order, kept) where identity.hasPrefix("k") {
            // Each distinct record merged away, from the first head that holds it.
            var seen: Set<String> = [stays.record.canonical]
            let dropped = groups[identity]!.filter { seen.insert($0.record.canonical).inserted }
            guard !dropped.isEmpty else { continue }
            func value(_ entry: (record: Record, version: Version)) -> ResolutionDecision.Value {
                ResolutionDecision.Value(entry.version, content: Data(entry.record.canonical.utf8))
            }
            context.record(
                ResolutionDecision(point: field + "=" + identity.dropFirst(), rule: rule.description, kept: value(stays), dropped: dropped.map(value))
            )
        }
        return .resolved(content: try collections[0].serialized(kept.map(\.record)))
    }

    /// Puts back the record with the decision's key that the dropped head held, in place of the current one (added
    /// at the end when the current version has none).
    public func restoring(_ point: String, from dropped: ConflictSet.Side, into current: ConflictSet.Side, context: ResolutionContext)
        async throws -> Data?
    {
        let (field, _) = try settings(context.options)
        let prefix = field + "="
        guard point.utf8.starts(with: prefix.utf8) else {
            throw TruceError.resolverFailed(name, reason: "\(point) is not a record of key \(field), which resolver.deduplicate.key names now")
        }
        let identity = String(Substring(point.utf8.dropFirst(prefix.utf8.count)))
        func hasIdentity(_ record: Record) -> Bool { record.fields[field].map { Record.canonical($0) == identity } ?? false }
        let key = current.version.key
        guard let restored = try RecordCollection(dropped, key: key).records.first(where: hasIdentity) else {
            throw TruceError.resolverFailed(name, reason: "version \(dropped.version.id.short) holds no record \(point)")
        }
        let collection = try RecordCollection(current, key: key)
        var records = collection.records
        if let index = records.firstIndex(where: hasIdentity) { records[index] = restored } else { records.append(restored) }
        return try collection.serialized(records)
    }

    func settings(_ options: ResolverOptions) throws(TruceError) -> (key: String, keep: KeepRule) {
        guard let key = options["key"]?.trimmingCharacters(in: .whitespaces), !key.isEmpty else {
            throw .invalidConfiguration("resolver.deduplicate.key is missing: name the field that identifies a record (for example uuid)")
        }
        guard let text = options["keep"] else { return (key, .smallestKey) }
        guard let rule = KeepRule(text) else { throw options.invalid("keep", text, "expected smallest-key, latest:<field> or smallest:<field>") }
        return (key, rule)
    }
}

extension Deduplicate.KeepRule: CustomStringConvertible {
    /// The rule in words, as a decision records it.
    var description: String {
        switch self {
        case .smallestKey: "the record whose canonical JSON sorts first stays"
        case .latest(let field): "the record with the latest \(field) stays"
        case .smallest(let field): "the record with the smallest \(field) stays"
        }
    }

    /// True when `lhs` stays rather than `rhs`; ties on the field fall back to the smallest canonical record.
    func prefers(_ lhs: Record, over rhs: Record) -> Bool {
        switch self {
        case .smallestKey:
            break
        case .latest(let field):
            let (left, right) = (FieldValue(lhs.fields[field]), FieldValue(rhs.fields[field]))
            if left != right { return left > right }
        case .smallest(let field):
            let (left, right) = (FieldValue(lhs.fields[field]), FieldValue(rhs.fields[field]))
            // A record that lacks the field is never the smallest.
            if left != right { return right == .missing || (left != .missing && left < right) }
        }
        return lhs.canonical.utf8.lexicographicallyPrecedes(rhs.canonical.utf8)
    }
}
