import Foundation
import TruceCore

/// The fields a merge rule decides (`FieldRules`), each merged from the base over every head at once, before the
/// structured merge runs: it then takes each decided value where it meets its path.
///
/// N heads at once, not folded pairwise as the rest of a structured merge
/// is: `lww` must compare the dates of the heads that changed a field, which
/// a fold would lose. A head that left a field as the base has it has no say;
/// when no head changed it, the base's value stands. Objects under no rule
/// (or `members`) are walked member by member; arrays under `id=MEMBER`
/// element by element, matched by that member. A rule under an array merged
/// as a sequence does not apply: its elements have no identity across heads.
struct FieldRulePass {
    /// What a rule decided at one place.
    enum Decision: Equatable {
        /// The value (nil: no member there).
        case value(StructuredValue?)
        /// A person decides, for this reason.
        case person(String)
    }

    /// A head's value with what `lww` orders heads by, and the base its step of the fold merges it against (the merge
    /// base of this head and the heads before it): what its own change to a `counter` is measured from, so that history
    /// two heads share is counted once.
    struct Head {
        let value: StructuredValue?
        let date: Date
        let id: String
        var stepBase: StructuredValue? = nil
        /// True when the step's base is the base itself (two heads, or a merge of plain files): nothing to look up.
        var stepBaseIsBase = true

        /// The head's value measured from `base`: its step's base, or `base` itself.
        func from(_ base: StructuredValue?) -> StructuredValue? { stepBaseIsBase ? base : stepBase }
    }

    /// What a rule kept and replaced among the heads' values at one place: what the resolution commit records, so
    /// that `review` lists what `lww`, `max` and `min` dropped (and that `counter` and `union` dropped nothing).
    struct Choice {
        let steps: [PathStep]
        let rule: FieldRule
        /// The head (by its index among the heads) whose value stayed; nil when none did (the base's value stood, or
        /// the value was made of every head's: a count, a set).
        let kept: Int?
        /// The heads whose changes the value replaced; empty for a rule that keeps every change.
        let dropped: [Int]
    }

    let rules: [FieldRule]
    private(set) var decisions: [[PathStep]: Decision] = [:]
    /// Each choice among the heads' values, in the order the walk met them.
    private(set) var choices: [Choice] = []
    /// Every path above a decision: the merge walks into these rather than taking one side whole.
    private(set) var above: Set<[PathStep]> = []

    /// The identity member the rules give the array at `tokens`, if one does.
    func identity(at tokens: [String]) -> String? {
        if case .byID(let member)? = rule(at: tokens)?.merge { return member }
        return nil
    }

    /// Each rule with its field's steps, read once: the walk asks at every member of every element.
    private let stepsOfRules: [(steps: [String], rule: FieldRule)]

    /// The rule that decides the field at `tokens`: the last that names it.
    func rule(at tokens: [String]) -> FieldRule? {
        stepsOfRules.last { entry in
            entry.steps.count == tokens.count && zip(entry.steps, tokens).allSatisfy { $0 == "*" || $0.utf8.elementsEqual($1.utf8) }
        }?.rule
    }

    /// Runs the rules over `base` and `heads` (current first); throws when a rule cannot apply to a value.
    init(rules: [FieldRule], base: StructuredValue?, heads: [Head]) throws(TruceError) {
        self.rules = rules
        stepsOfRules = rules.map { ($0.fieldSteps, $0) }
        guard !rules.isEmpty else { return }
        try walk(base, heads, tokens: [], steps: [])
    }

    /// Sends the place `steps` to a person with `reason`, whatever a rule decided there: an invariant the merge broke.
    mutating func ask(_ reason: String, at steps: [PathStep]) { decide(.person(reason), at: steps) }

    private mutating func decide(_ decision: Decision, at steps: [PathStep]) {
        decisions[steps] = decision
        above.formUnion((0..<steps.count).map { Array(steps.prefix($0)) })
    }

    /// True when some rule names this field or one below it: a walk goes no further where none does.
    private func rulesReach(_ tokens: [String]) -> Bool {
        stepsOfRules.contains { entry in
            entry.steps.count >= tokens.count && zip(entry.steps, tokens).allSatisfy { $0 == "*" || $0.utf8.elementsEqual($1.utf8) }
        }
    }

    private mutating func walk(_ base: StructuredValue?, _ heads: [Head], tokens: [String], steps: [PathStep]) throws(TruceError) {
        // Where no head changed anything, every rule keeps the base: nothing to decide (most of a large document).
        guard rulesReach(tokens), heads.contains(where: { !Self.same($0.value, base) || (!$0.stepBaseIsBase && !Self.same($0.stepBase, base)) })
        else { return }
        let rule = rule(at: tokens)
        switch rule?.merge {
        case nil, .members?, .byID?:
            break
        case let merge?:
            if heads.contains(where: { $0.value != base }) {
                let decision = try Self.merge(merge, base: base, heads: heads, rule: rule!, at: tokens)
                decide(decision, at: steps)
                if case .value(let value) = decision, let choice = Self.choice(merge, value, base: base, heads: heads, rule: rule!, at: steps) {
                    choices.append(choice)
                }
            }
            return
        }
        // An object or array the base has and a head removed: whether it stays is the merge's to settle (removed where
        // no other head changed it, else a conflict), not its fields' rules, which would count the removal as a change.
        if base != nil, heads.contains(where: { $0.value == nil }) { return }
        let present = ([base] + heads.map(\.value)).compactMap { $0 }
        if let objects = Optional(present.compactMap(\.object)), objects.count == present.count, !objects.isEmpty {
            // Members in a fixed order: the current head's, then those only others have.
            var seen = Set<ObjectValue.Occurrence>()
            var occurrences: [ObjectValue.Occurrence] = []
            for object in [heads.first?.value?.object, base?.object].compactMap({ $0 }) + heads.dropFirst().compactMap(\.value?.object) {
                for occurrence in object.occurrences where seen.insert(occurrence).inserted { occurrences.append(occurrence) }
            }
            for occurrence in occurrences {
                func member(_ value: StructuredValue?) -> StructuredValue? {
                    value?.object.flatMap { object in object.memberIndex()(occurrence).map { object.members[$0].value } }
                }
                try walk(
                    member(base),
                    heads.map {
                        Head(
                            value: member($0.value), date: $0.date, id: $0.id, stepBase: $0.stepBaseIsBase ? nil : member($0.stepBase),
                            stepBaseIsBase: $0.stepBaseIsBase)
                    },
                    tokens: tokens + [occurrence.key],
                    steps: steps + [.member(occurrence.key, occurrence: occurrence.count)])
            }
        } else if case .byID(let member)? = rule?.merge, present.allSatisfy({ $0.array != nil }), !present.isEmpty {
            func identity(_ element: StructuredValue) -> StructuredValue? {
                guard let identity = element.object?[member], identity.object == nil, identity.array == nil else { return nil }
                return identity
            }
            for array in present.compactMap(\.array) where array.elements.contains(where: { identity($0) == nil }) {
                throw Self.cannotApply(rule!, at: tokens, "an element has no scalar member '\(member)' to match it by")
            }
            // The heads' arrays, then the arrays of the bases their steps merge against (where those are not the base).
            let baseElements = base?.array?.elements ?? []
            var versions = heads.map { $0.value?.array?.elements ?? [] }
            let stepVersions = heads.map { head -> Int? in
                guard !head.stepBaseIsBase else { return nil }
                versions.append(head.stepBase?.array?.elements ?? [])
                return versions.count - 1
            }
            let matching = ElementMatching(base: baseElements, versions: versions, identity: identity)
            func walkElement(_ baseElement: StructuredValue?, positions: [Int?], identity: StructuredValue, at position: Int) throws(TruceError) {
                func element(_ version: Int?) -> StructuredValue? { version.flatMap { positions[$0].map { versions[version!][$0] } } }
                try walk(
                    baseElement,
                    heads.indices.map { index in
                        let head = heads[index]
                        return Head(
                            value: element(index), date: head.date, id: head.id, stepBase: element(stepVersions[index]),
                            stepBaseIsBase: head.stepBaseIsBase)
                    },
                    tokens: tokens + [String(position)], steps: steps + [.element(identityMember: member, identity: identity)])
            }
            // Each base element a version changed or does not have, under its base position; an element every version
            // holds unchanged has nothing to decide, and no path is built for it.
            for position in baseElements.indices {
                let found = matching.matches.map { $0[position] }
                if found.allSatisfy({ $0?.isUnchanged == true }) { continue }
                try walkElement(
                    baseElements[position], positions: found.map { $0?.position }, identity: identity(baseElements[position])!, at: position)
            }
            // Then each element the base does not have, under the first head's position of it.
            for addition in matching.additions {
                try walkElement(
                    nil, positions: addition.positions, identity: addition.identity, at: addition.positions.lazy.compactMap { $0 }.first ?? 0)
            }
        }
    }

    /// True when two values are equal: by their bytes where both were read from JSON (most of a large document,
    /// and cheaper than comparing the trees), else by meaning.
    static func same(_ a: StructuredValue?, _ b: StructuredValue?) -> Bool {
        if let left = a?.readBytes, let right = b?.readBytes, left.elementsEqual(right) { return true }
        return a == b
    }

    // MARK: - Rules

    /// What `value`, the rule's result, kept and replaced: nil where there was no choice to record (one head changed
    /// the field, or every head that changed it made the same value).
    static func choice(
        _ merge: FieldMerge, _ value: StructuredValue?, base: StructuredValue?, heads: [Head], rule: FieldRule, at steps: [PathStep]
    ) -> Choice? {
        let changed = heads.indices.filter { heads[$0].value != base }
        switch merge {
        case .lww, .max, .min:
            let dropped = changed.filter { heads[$0].value != value }
            guard !dropped.isEmpty else { return nil }
            // The head whose value stayed: for lww the winner, for max and min the first to hold it (none: the base's).
            let kept = changed.first { heads[$0].value == value }
            return Choice(steps: steps, rule: rule, kept: kept, dropped: dropped)
        case .counter, .union:
            // Several heads' changes, every one of them in the value (two equal increments count twice).
            guard merge == .counter ? changed.count > 1 : Set(changed.map { heads[$0].value }).count > 1 else { return nil }
            return Choice(steps: steps, rule: rule, kept: nil, dropped: [])
        case .text, .person, .members, .byID:
            return nil
        }
    }

    static func cannotApply(_ rule: FieldRule, at tokens: [String], _ why: String) -> TruceError {
        .invalidConfiguration(
            "the rule '\(rule.merge.name)' for \(rule.field) (\(rule.source ?? "declared in Swift")) cannot apply at "
                + "\(JSONPointer.string(tokens).isEmpty ? "the whole document" : JSONPointer.string(tokens)): \(why)")
    }

    static func merge(_ merge: FieldMerge, base: StructuredValue?, heads: [Head], rule: FieldRule, at tokens: [String]) throws(TruceError)
        -> Decision
    {
        let changed = heads.filter { $0.value != base }
        switch merge {
        case .lww:
            // The current-version rule: the latest date, then the larger version id.
            let winner = changed.max { a, b in a.date != b.date ? a.date < b.date : Array(a.id.utf8).lexicographicallyPrecedes(b.id.utf8) }
            return .value(winner?.value ?? base)
        case .max, .min:
            let values = changed.compactMap(\.value) + [base].compactMap { $0 }
            guard !values.isEmpty else { return .value(nil) }
            var best = values[0]
            for value in values.dropFirst() {
                let order = try compare(value, best, rule: rule, at: tokens)
                if merge == .max ? order > 0 : order < 0 { best = value }
            }
            return .value(best)
        case .counter:
            func number(_ value: StructuredValue?) throws(TruceError) -> Decimal {
                guard let value else { return 0 }
                guard case .number(let text) = value, let number = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
                    throw cannotApply(rule, at: tokens, "\(describe(value)) is not a number")
                }
                return number
            }
            // The current head's count, then each other head's own change, from the base its step merges against.
            var total = try number(heads[0].value)
            for head in heads.dropFirst() where head.value != head.from(base) { total += try number(head.value) - number(head.from(base)) }
            return .value(.number("\(total)"))
        case .union:
            func scalars(_ value: StructuredValue?) throws(TruceError) -> [StructuredValue] {
                guard let value else { return [] }
                guard let array = value.array else { throw cannotApply(rule, at: tokens, "\(describe(value)) is not an array") }
                for element in array.elements where element.object != nil || element.array != nil {
                    throw cannotApply(rule, at: tokens, "an element is \(element.kindName), where union merges scalars")
                }
                return array.elements
            }
            let baseSet = Set(try scalars(base))
            var added: [StructuredValue] = [], removed = Set<StructuredValue>()
            for head in heads {
                let elements = try scalars(head.value)
                let here = Set(elements)
                added += elements.filter { !baseSet.contains($0) }
                removed.formUnion(baseSet.subtracting(here))
            }
            let addedSet = Set(added)
            // The current head's order for what it holds, then what the others added, in head order.
            var result: [StructuredValue] = [], placed = Set<StructuredValue>()
            for element in try scalars(heads.first?.value) + (try scalars(base)) + added
            where (!removed.contains(element) || addedSet.contains(element)) && placed.insert(element).inserted {
                result.append(element)
            }
            let template = heads.first?.value?.array ?? changed.first?.value?.array ?? base?.array
            let sources = result.map { element in template?.elements.firstIndex(of: element).flatMap { template?.source($0) } }
            return .value(.array(ArrayValue(elements: result, sources: sources, isInline: template?.isInline ?? true, layout: template?.layout)))
        case .text:
            func text(_ value: StructuredValue?) throws(TruceError) -> String? {
                guard let value else { return nil }
                guard case .string(let text, _) = value else { throw cannotApply(rule, at: tokens, "\(describe(value)) is not a string") }
                return text
            }
            guard let baseText = try text(base) else {
                return distinct(changed) ? .person("text: added on more than one side with different text") : .value(changed.first?.value)
            }
            var merged = try text(heads.first?.value)
            for head in heads.dropFirst() {
                let theirs = try text(head.value)
                if theirs == merged || theirs == baseText { continue }
                if merged == baseText {
                    merged = theirs
                    continue
                }
                guard let ours = merged, let theirs else { return .person("text: removed on one side and changed on the other") }
                guard let result = try TextMerge.merge(base: Data(baseText.utf8), ours: Data(ours.utf8), theirs: Data(theirs.utf8)),
                    result.isClean
                else { return .person("text: both sides changed the same lines") }
                merged = String(decoding: result.content, as: UTF8.self)
            }
            return .value(merged.map { text in heads.lazy.compactMap(\.value).first { $0 == .string(text) } ?? .string(text) })
        case .person:
            return distinct(changed) ? .person("person: a person decides this field") : .value(changed.first?.value)
        case .members, .byID:
            preconditionFailure("walked, not decided")
        }
    }

    /// True when the heads hold more than one value.
    private static func distinct(_ heads: [Head]) -> Bool { Set(heads.map { $0.value.map { [$0] } ?? [] }).count > 1 }

    /// -1, 0 or 1: numbers by value, strings by their bytes; anything else cannot be ordered.
    private static func compare(_ a: StructuredValue, _ b: StructuredValue, rule: FieldRule, at tokens: [String]) throws(TruceError) -> Int {
        switch (a, b) {
        case (.number(let x), .number(let y)):
            let locale = Locale(identifier: "en_US_POSIX")
            guard let p = Decimal(string: x, locale: locale), let q = Decimal(string: y, locale: locale) else { return 0 }
            // Equal numbers spelled differently (1.0, 1.00): the larger spelling by bytes, so every replica picks alike.
            return p < q ? -1 : p > q ? 1 : Array(x.utf8).lexicographicallyPrecedes(y.utf8) ? -1 : x == y ? 0 : 1
        case (.string(let x, _), .string(let y, _)):
            return Array(x.utf8).lexicographicallyPrecedes(y.utf8) ? -1 : x.utf8.elementsEqual(y.utf8) ? 0 : 1
        default:
            throw cannotApply(rule, at: tokens, "\(describe(a)) and \(describe(b)) cannot be ordered (numbers or strings only)")
        }
    }

    private static func describe(_ value: StructuredValue) -> String {
        switch value {
        case .string(_, let source): source
        case .number(let text): text
        default: value.kindName
        }
    }
}
