import Foundation
import TruceCore

/// The key-by-key merge of dictionary heads against their base: JSON by `KeyedJSONMerge`, in place and at any depth;
/// property lists here.
///
/// For each top-level key of a property list: when no head changed it from
/// the base, the base's value stays; otherwise the latest head among those
/// that changed it wins (adding, changing and removing the key are all
/// changes). Values are compared whole. Where heads changed a key to
/// different values, a decision names the kept value and each one replaced.
struct KeyedMerge {
    let conflict: ConflictSet

    init(_ conflict: ConflictSet) { self.conflict = conflict }

    /// The merged document, and a decision for each key whose changes differed.
    func merged() throws -> (content: Data, decisions: [ResolutionDecision]) {
        let key = conflict.key
        let current = conflict.current
        let kind = KeyedDocument.kind(of: key, sample: current.content ?? Data())
        let heads = try conflict.heads.map { (side: $0, document: try KeyedDocument($0, kind: kind, key: key)) }
        // JSON: every head is a valid object (read above), so it merges in place, keeping every byte it does not change.
        if kind == .json {
            var merge = KeyedJSONMerge(conflict)
            return merge.merged()
        }
        // With no base (unrelated histories, or a base that is a deletion) every key is an addition.
        var base: [String: Any] = [:]
        if let side = conflict.base, side.content != nil { base = try KeyedDocument(side, kind: kind, key: key).entries }
        var result: [String: Any] = [:]
        var decisions: [ResolutionDecision] = []
        for name in Set(base.keys).union(heads.flatMap(\.document.entries.keys)).sorted() {
            let baseValue = KeyedDocument.canonical(base[name], kind: kind)
            let changers = heads.filter { KeyedDocument.canonical($0.document.entries[name], kind: kind) != baseValue }
            let value: Any?
            if let winner = changers.max(by: { LastWriterWins.isEarlier($0.side.version, than: $1.side.version) }) {
                value = winner.document.entries[name]  // nil when the winning change removed the key
                let kept = KeyedDocument.canonical(value, kind: kind)
                let dropped = changers.filter { KeyedDocument.canonical($0.document.entries[name], kind: kind) != kept }
                if !dropped.isEmpty {
                    func text(_ head: (side: ConflictSet.Side, document: KeyedDocument)) -> ResolutionDecision.Value {
                        ResolutionDecision.Value(head.side.version, content: KeyedDocument.text(of: head.document.entries[name], kind: kind))
                    }
                    decisions.append(
                        ResolutionDecision(point: Self.pointer(to: name), rule: LastWriterWins.rule, kept: text(winner), dropped: dropped.map(text)))
                }
            } else {
                value = base[name]
            }
            result[name] = value
        }
        return (try heads[0].document.serialized(result), decisions)
    }

    /// The JSON Pointer of a top-level key (RFC 6901: `~` is `~0`, `/` is `~1`).
    static func pointer(to name: String) -> String {
        "/" + name.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
    }

    /// The keys a JSON Pointer steps through; `/theme` is `["theme"]`.
    static func tokens(of pointer: String) -> [String] {
        guard pointer.hasPrefix("/") else { return [] }
        return pointer.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
            .map { $0.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~") }
    }
}
