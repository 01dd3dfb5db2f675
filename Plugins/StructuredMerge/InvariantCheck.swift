import Foundation
import TruceCore

/// The invariants a merged document breaks (`FieldInvariant`), each with the field a person then decides and why.
enum InvariantCheck {
    /// One broken invariant: the field's place in the merged document, and the reason a person reads.
    struct Violation: Equatable {
        let tokens: [String]
        let reason: String
    }

    static func violations(of invariants: [FieldInvariant], in root: StructuredValue?) -> [Violation] {
        invariants.flatMap { invariant in
            places(invariant.fieldSteps, in: root).compactMap { tokens, value in
                problem(invariant.check, value: value, root: root).map { why in
                    Violation(
                        tokens: tokens,
                        reason: "invariant '\(invariant.field) \(invariant.check.name)' (\(invariant.source ?? "declared in Swift")): "
                            + "the merge gives \(shown(tokens)) \(why)")
                }
            }
        }
    }

    /// Every place `steps` names in `root`, with its value there (nil: its object lacks the member). A `*` step is each
    /// member of an object, or each element of an array, in turn.
    static func places(_ steps: [String], in root: StructuredValue?) -> [([String], StructuredValue?)] {
        var found: [([String], StructuredValue?)] = [([], root)]
        for step in steps {
            found = found.flatMap { tokens, value -> [([String], StructuredValue?)] in
                if step == "*" {
                    if let object = value?.object { return object.members.map { (tokens + [$0.key], $0.value) } }
                    if let array = value?.array { return array.elements.indices.map { (tokens + [String($0)], array.elements[$0]) } }
                    return []
                }
                if let object = value?.object { return [(tokens + [step], object[step])] }
                if let array = value?.array, let index = Int(step), array.elements.indices.contains(index) {
                    return [(tokens + [step], array.elements[index])]
                }
                return []
            }
        }
        return found
    }

    private static func problem(_ check: FieldCheck, value: StructuredValue?, root: StructuredValue?) -> String? {
        switch check {
        case .required:
            return value == nil ? "no value" : nil
        case .type(let type):
            guard let value else { return nil }
            let kind = jsonType(value)
            return kind == type ? nil : "\(kind), not \(type)"
        case .unique(let member):
            guard let elements = value?.array?.elements else { return nil }
            var seen = Set<StructuredValue>()
            for identity in elements.compactMap({ $0.object?[member] }) where !seen.insert(identity).inserted {
                return "two elements with \(member) \(text(identity))"
            }
            return nil
        case .maxCount(let limit):
            let count = value?.array?.elements.count ?? value?.object?.members.count ?? 0
            return count > limit ? "\(count) items, more than \(limit)" : nil
        case .atLeast(let field), .atMost(let field):
            let other = places(FieldRule.steps(ofPointer: field), in: root).first?.1
            guard let value, let other, let order = compare(value, other) else { return nil }
            if case .atLeast = check, order < 0 { return "\(text(value)), below \(field) = \(text(other))" }
            if case .atMost = check, order > 0 { return "\(text(value)), above \(field) = \(text(other))" }
            return nil
        }
    }

    /// -1, 0 or 1 for two numbers or two strings; nil for anything else, which an order check leaves alone.
    private static func compare(_ a: StructuredValue, _ b: StructuredValue) -> Int? {
        switch (a, b) {
        case (.number(let x), .number(let y)):
            let locale = Locale(identifier: "en_US_POSIX")
            guard let p = Decimal(string: x, locale: locale), let q = Decimal(string: y, locale: locale) else { return nil }
            return p < q ? -1 : p > q ? 1 : 0
        case (.string(let x, _), .string(let y, _)):
            return Array(x.utf8).lexicographicallyPrecedes(y.utf8) ? -1 : x.utf8.elementsEqual(y.utf8) ? 0 : 1
        default:
            return nil
        }
    }

    private static func jsonType(_ value: StructuredValue) -> String {
        switch value {
        case .string: "string"
        case .number, .real: "number"
        case .bool: "boolean"
        case .object: "object"
        case .array: "array"
        case .null: "null"
        case .date: "date"
        case .data: "data"
        case .unresolved: "a conflict"
        }
    }

    private static func text(_ value: StructuredValue) -> String {
        switch value {
        case .string(_, let source): source
        case .number(let text): text
        default: jsonType(value)
        }
    }

    private static func shown(_ tokens: [String]) -> String { tokens.isEmpty ? "the document" : JSONPointer.string(tokens) }

    /// The path where a person decides a violation at `tokens`: the steps of the members on the way, stopping at an
    /// array, whose elements have no name across heads here.
    static func steps(_ tokens: [String], in root: StructuredValue?) -> (tokens: [String], steps: [PathStep]) {
        var value = root
        var steps: [PathStep] = []
        var taken: [String] = []
        for token in tokens {
            guard let object = value?.object else { break }
            steps.append(.member(token, occurrence: 0))
            taken.append(token)
            value = object[token]
        }
        return (taken, steps)
    }
}
