import Foundation
import TruceCore

/// What the field rules chose, recorded as the resolution's decisions; and one dropped value put back by `restore`.
///
/// A decision's place is the field's JSON Pointer in the merged document
/// (an element of an array matched by id at its index there). `lww`, `max`
/// and `min` record the head whose value stayed and each head whose change
/// they replaced; `counter` and `union` record that they kept every head's
/// change. A restore finds the place in the resolution that dropped the
/// value, follows it by member name and element id into the dropped head and
/// the current version, and writes the current version with only that value
/// changed.
extension StructuredMerge: RestoringResolver {
    /// The decisions `choices` make in `merged`, the resolution's document.
    func decisions(_ choices: [FieldRulePass.Choice], in merged: StructuredValue, _ fold: HeadFold) -> [ResolutionDecision] {
        choices.compactMap { choice in
            // A field the merge did not reach (the other side removed what holds it) is not in the resolution.
            guard let pointer = Self.pointer(of: choice.steps, in: merged) else { return nil }
            func value(_ head: Int) -> ResolutionDecision.Value {
                // The value as JSON text, without the line break `text(of:)` ends it with (CRLF in a CRLF document).
                let text = HeadFold.value(at: choice.steps, in: fold.heads[head].root).map { value in
                    Data(fold.current.text(of: value).reversed().drop { $0 == 0x0A || $0 == 0x0D }.reversed())
                }
                return ResolutionDecision.Value(fold.conflict.heads[head].version, content: text)
            }
            return ResolutionDecision(
                point: pointer, rule: Self.ruleText(choice.rule), kept: choice.kept.map(value), dropped: choice.dropped.map(value))
        }
    }

    /// `field rule lww (.truce/fields line 3): the latest change wins`.
    static func ruleText(_ rule: FieldRule) -> String {
        let why =
            switch rule.merge {
            case .lww: "the latest change wins"
            case .max: "the largest value stays"
            case .min: "the smallest value stays"
            case .counter: "every head's change is counted; nothing dropped"
            case .union: "every head's additions and removals are kept; nothing dropped"
            default: "decided by the rule"
            }
        return "field rule \(rule.merge.name) (\(rule.source ?? "declared in Swift")): \(why)"
    }

    /// The JSON Pointer of `steps` in `root`: members by name, elements at their index; nil when a container on the
    /// way is not there (the last member may be absent: a rule that kept a removal).
    static func pointer(of steps: [PathStep], in root: StructuredValue) -> String? {
        var value: StructuredValue? = root
        var tokens: [String] = []
        for (index, step) in steps.enumerated() {
            let isLast = index == steps.count - 1
            switch step {
            case .member(let key, let occurrence):
                guard let object = value?.object else { return nil }
                tokens.append(key)
                value = object.indexByOccurrence()[ObjectValue.Occurrence(key: key, count: occurrence)].map { object.members[$0].value }
                if value == nil, !isLast { return nil }
            case .element(let member, let identity):
                guard let position = value?.array?.elements.firstIndex(where: { $0.object?[member] == identity }) else { return nil }
                tokens.append(String(position))
                value = value?.array?.elements[position]
            }
        }
        return JSONPointer.string(tokens)
    }

    /// The current version with the value `dropped` holds at `point` in place of its own (removed where `dropped`
    /// has none); every other byte as the current version has it.
    public func restoring(_ point: String, from dropped: ConflictSet.Side, into current: ConflictSet.Side, context: ResolutionContext)
        async throws -> Data?
    {
        func failure(_ reason: String) -> TruceError { .resolverFailed(name, reason: reason) }
        guard let currentContent = current.content else { throw failure("the current version of \(current.version.key) is a deletion") }
        let kind = StructuredDocument.kind(ofPath: current.version.key.rawValue, sample: currentContent)
        func read(_ content: Data?, _ what: String) throws -> StructuredDocument {
            guard let content else { throw failure("\(what) is a deletion") }
            do { return try StructuredDocument.read(content, kind: kind) } catch { throw failure("\(what) \(error.description)") }
        }
        let currentDocument = try read(currentContent, "the current version")
        let droppedDocument = try read(dropped.content, "version \(dropped.version.id.short)")
        // The point names a place in the resolution's document: its elements' ids say which element is meant.
        let resolution = try context.droppingResolution.map { try read($0.content, "the resolution \($0.version.id.short)") } ?? currentDocument
        let steps = try steps(of: JSONPointer.tokens(point), in: resolution.root, rules: context.fieldRules)
        do {
            let restored = try Self.replacing(steps[...], in: currentDocument.root, with: HeadFold.value(at: steps, in: droppedDocument.root))
            guard let restored else { return nil }
            return try currentDocument.written(restored)
        } catch {
            throw failure("\(point): \(error.description)")
        }
    }

    /// The way to `tokens` in `root`: members by name, and where the rules match an array's elements by an id
    /// member, the element at that index by its id.
    private func steps(of tokens: [String], in root: StructuredValue, rules: [FieldRule]) throws -> [PathStep] {
        var steps: [PathStep] = []
        var value: StructuredValue? = root
        for (index, token) in tokens.enumerated() {
            if let array = value?.array {
                let above = Array(tokens[..<index])
                guard case .byID(let member)? = rules.last(where: { $0.matches(fieldSteps: above) })?.merge,
                    let position = Int(token), array.elements.indices.contains(position),
                    let identity = array.elements[position].object?[member]
                else {
                    throw TruceError.resolverFailed(
                        name, reason: "\(JSONPointer.string(tokens)) does not name a field of an element matched by its id in the resolution")
                }
                steps.append(.element(identityMember: member, identity: identity))
                value = array.elements[position]
            } else {
                steps.append(.member(token, occurrence: 0))
                value = value?.object?[token]
            }
        }
        return steps
    }

    /// `value` with `new` at `steps` (nil: nothing there); throws when a container on the way is missing.
    static func replacing(_ steps: ArraySlice<PathStep>, in value: StructuredValue?, with new: StructuredValue?) throws(StructuredInputError)
        -> StructuredValue?
    {
        guard let step = steps.first else { return new }
        let rest = steps.dropFirst()
        switch step {
        case .member(let key, let occurrence):
            guard var object = value?.object else { throw StructuredInputError("the current version has no object there") }
            if let index = object.indexByOccurrence()[ObjectValue.Occurrence(key: key, count: occurrence)] {
                if let replaced = try replacing(rest, in: object.members[index].value, with: new) {
                    object.members[index] = object.members[index].holding(replaced)
                } else {
                    object.members.remove(at: index)
                }
            } else {
                guard rest.isEmpty else { throw StructuredInputError("the current version has no member \(JSONPrinter.quoted(key))") }
                if let new { object.members.append(ObjectValue.Member(key: key, value: new)) }
            }
            return .object(object)
        case .element(let member, let identity):
            guard var array = value?.array else { throw StructuredInputError("the current version has no array there") }
            if array.sources.isEmpty { array.sources = array.elements.indices.map { array.source($0) } }
            if let index = array.elements.firstIndex(where: { $0.object?[member] == identity }) {
                if let replaced = try replacing(rest, in: array.elements[index], with: new) {
                    array.elements[index] = replaced
                } else {
                    array.elements.remove(at: index)
                    array.sources.remove(at: index)
                }
            } else {
                guard rest.isEmpty else { throw StructuredInputError("the current version has no element whose \(member) is that id") }
                if let new {
                    array.elements.append(new)
                    array.sources.append(nil)
                }
            }
            return .array(array)
        }
    }
}
