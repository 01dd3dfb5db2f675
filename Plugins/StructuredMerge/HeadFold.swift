import Foundation
import TruceCore

/// Every head of a conflict set merged by structure, current first, each into the result of those before it.
///
/// Step i merges head i into the result of heads 0..<i against the merge base
/// of head i and those heads, as the text fold does; the order is the
/// deterministic head order, so every replica folds alike.
struct HeadFold {
    let conflict: ConflictSet
    let kind: StructuredDocument.Kind
    /// The current version's document, whose format the result is written in.
    let current: StructuredDocument
    let heads: [StructuredDocument]
    let base: StructuredDocument?

    /// Reads every head and the base; a reason to pass when one cannot be merged by structure.
    init(_ conflict: ConflictSet) throws(StructuredInputError) {
        self.conflict = conflict
        guard let base = conflict.base else { throw StructuredInputError("the heads have no common base") }
        guard let baseContent = base.content else { throw StructuredInputError("the base \(base.version.id.short) is a deletion") }
        kind = StructuredDocument.kind(ofPath: conflict.key.rawValue, sample: conflict.current.content ?? Data())
        var heads: [StructuredDocument] = []
        for side in conflict.heads {
            heads.append(try Self.read(side, kind: kind))
        }
        self.heads = heads
        let baseDocument = try Self.read(ConflictSet.Side(version: base.version, content: baseContent), kind: kind)
        self.base = baseDocument
        // Two heads: the document's edges as the one head that changed them has them (see `StructuredDocument.edges`).
        current = heads.count == 2 ? heads[0].edges(following: heads[1], base: baseDocument) : heads[0]
    }

    private static func read(_ side: ConflictSet.Side, kind: StructuredDocument.Kind) throws(StructuredInputError) -> StructuredDocument {
        guard let content = side.content else { throw StructuredInputError("version \(side.version.id.short) is a deletion") }
        do {
            return try StructuredDocument.read(content, kind: kind)
        } catch {
            throw StructuredInputError("version \(side.version.id.short) \(error.description)")
        }
    }

    /// The merged tree and every conflict the steps met (with `answers` substituted where a person gave them).
    func run(
        rules: MergeRules, fieldRules: [FieldRule] = [], answers: [String: StructuredValue?] = [:], asking: [[PathStep]: String] = [:]
    ) throws -> (value: StructuredValue?, conflicts: [TreeConflict]) {
        var fields = try FieldRulePass(
            rules: fieldRules, base: base?.root,
            heads: zip(heads, conflict.heads).map { FieldRulePass.Head(value: $0.root, date: $1.version.modificationDate, id: $1.version.id.hex) })
        for (steps, reason) in asking { fields.ask(reason, at: steps) }
        var result: StructuredValue? = current.root
        var merged = [conflict.current.version.id]
        var conflicts: [TreeConflict] = []
        for (index, side) in conflict.conflicts.enumerated() {
            let stepBase: StructuredDocument
            if conflict.conflicts.count == 1 {
                stepBase = base!
            } else {
                guard let found = try conflict.mergeBase(of: side.version.id, and: merged), let content = found.content else {
                    throw StructuredInputError("version \(side.version.id.short) shares no base with the others")
                }
                stepBase = try StructuredDocument.read(content, kind: kind)
            }
            var merge = TreeMerge(rules: rules, answers: answers, fields: fields)
            result = merge.merge(base: stepBase.root, ours: result, theirs: heads[index + 1].root)
            conflicts += merge.conflicts
            merged.append(side.version.id)
        }
        return (result, conflicts)
    }

    /// The value at `steps` in `document`, following members by name and array elements by identity.
    static func value(at steps: [PathStep], in document: StructuredValue?) -> StructuredValue? {
        var value = document
        for step in steps {
            switch step {
            case .member(let key, let occurrence):
                value = value?.object.flatMap { object in
                    object.indexByOccurrence()[ObjectValue.Occurrence(key: key, count: occurrence)].map { object.members[$0].value }
                }
            case .element(let member, let identity):
                value = value?.array?.elements.first { $0.object?[member] == identity }
            }
        }
        return value
    }
}
