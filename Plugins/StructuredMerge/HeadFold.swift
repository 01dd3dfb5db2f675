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

    /// The merged tree, every conflict the steps met (with `answers` substituted where a person gave them), and what
    /// the field rules chose among the heads' values.
    func run(
        rules: MergeRules, fieldRules: [FieldRule] = [], answers: [String: StructuredValue?] = [:], asking: [[PathStep]: String] = [:]
    ) throws -> (value: StructuredValue?, conflicts: [TreeConflict], choices: [FieldRulePass.Choice]) {
        // Each step merges head i into the heads before it, against their merge base (for two heads, the base).
        var stepBases: [StructuredDocument] = []
        var merged = [conflict.current.version.id]
        for side in conflict.conflicts {
            if !fieldRules.isEmpty, let ruled = try ruledBase(of: side.version.id, and: merged, rules: rules, fieldRules: fieldRules) {
                stepBases.append(ruled)
            } else if conflict.conflicts.count == 1 {
                stepBases.append(base!)
            } else {
                guard let found = try conflict.mergeBase(of: side.version.id, and: merged), let content = found.content else {
                    throw StructuredInputError("version \(side.version.id.short) shares no base with the others")
                }
                stepBases.append(try StructuredDocument.read(content, kind: kind))
            }
            merged.append(side.version.id)
        }
        let overallBase = conflict.conflicts.count == 1 ? stepBases[0].root : base?.root
        var fields = try FieldRulePass(
            rules: fieldRules, base: overallBase,
            heads: zip(heads, conflict.heads).enumerated().map { index, head in
                FieldRulePass.Head(
                    value: head.0.root, date: head.1.version.modificationDate, id: head.1.version.id.hex,
                    stepBase: index == 0 || conflict.conflicts.count == 1 ? nil : stepBases[index - 1].root,
                    stepBaseIsBase: index == 0 || conflict.conflicts.count == 1)
            })
        for (steps, reason) in asking { fields.ask(reason, at: steps) }
        var result: StructuredValue? = current.root
        var conflicts: [TreeConflict] = []
        for (index, stepBase) in stepBases.enumerated() {
            var merge = TreeMerge(rules: rules, answers: answers, fields: fields)
            result = merge.merge(base: stepBase.root, ours: result, theirs: heads[index + 1].root)
            conflicts += merge.conflicts
        }
        return (result, conflicts, fields.choices)
    }

    /// The base for merging `first` into `others` under field rules: with several merge bases (a criss-cross) their
    /// fold by the same rules, each step against the bases' own merge base, so that a counter counts each change once
    /// (folded line by line, a count both bases changed would fall back to one of them). The first base when they do
    /// not merge cleanly; nil when there is none.
    private func ruledBase(
        of first: VersionID, and others: [VersionID], rules: MergeRules, fieldRules: [FieldRule], depth: Int = 0
    ) throws -> StructuredDocument? {
        let bases = try conflict.mergeBases(of: first, and: others)
        guard let firstBase = bases.first, let firstContent = firstBase.content else { return nil }
        let alone = try StructuredDocument.read(firstContent, kind: kind)
        guard bases.count > 1, depth < 4 else { return alone }
        var virtual = alone
        var folded = [firstBase.version.id]
        for next in bases.dropFirst() {
            guard let content = next.content,
                let stepBase = try ruledBase(of: next.version.id, and: folded, rules: rules, fieldRules: fieldRules, depth: depth + 1)
            else { return alone }
            let theirs = try StructuredDocument.read(content, kind: kind)
            let fields = try FieldRulePass(
                rules: fieldRules, base: stepBase.root,
                heads: [
                    FieldRulePass.Head(value: virtual.root, date: firstBase.version.modificationDate, id: firstBase.version.id.hex),
                    FieldRulePass.Head(value: theirs.root, date: next.version.modificationDate, id: next.version.id.hex),
                ])
            var merge = TreeMerge(rules: rules, fields: fields)
            guard let value = merge.merge(base: stepBase.root, ours: virtual.root, theirs: theirs.root), merge.conflicts.isEmpty else {
                return alone
            }
            virtual = StructuredDocument(root: value, format: virtual.format)
            folded.append(next.version.id)
        }
        return virtual
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
