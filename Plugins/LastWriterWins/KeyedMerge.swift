import Foundation
import TruceCore

/// The key-by-key merge of dictionary heads against their base.
///
/// For each top-level key: when no head changed it from the base, the base's
/// value stays; otherwise the latest head among those that changed it wins
/// (adding, changing and removing the key are all changes). Values are
/// compared whole; nested dictionaries are not merged further.
struct KeyedMerge {
    let conflict: ConflictSet

    init(_ conflict: ConflictSet) { self.conflict = conflict }

    func merged() throws -> Data {
        let key = conflict.key
        let current = conflict.current
        let kind = KeyedDocument.kind(of: key, sample: current.content ?? Data())
        let heads = try conflict.heads.map { (side: $0, document: try KeyedDocument($0, kind: kind, key: key)) }
        // With no base (unrelated histories, or a base that is a deletion) every key is an addition.
        var base: [String: Any] = [:]
        if let side = conflict.base, side.content != nil { base = try KeyedDocument(side, kind: kind, key: key).entries }
        var result: [String: Any] = [:]
        for name in Set(base.keys).union(heads.flatMap(\.document.entries.keys)).sorted() {
            let baseValue = KeyedDocument.canonical(base[name], kind: kind)
            let changers = heads.filter { KeyedDocument.canonical($0.document.entries[name], kind: kind) != baseValue }
            let value: Any?
            if let winner = changers.max(by: { LastWriterWins.isEarlier($0.side.version, than: $1.side.version) }) {
                value = winner.document.entries[name]  // nil when the winning change removed the key
            } else {
                value = base[name]
            }
            result[name] = value
        }
        return try heads[0].document.serialized(result)
    }
}
