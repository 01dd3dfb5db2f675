import Foundation

/// A JSON document an app saves and reads as a Swift value, with the merge rules of its fields next to the type.
///
/// ```swift
/// struct Note: TypedDocument {
///     var title: String
///     var tags: [String]
///     var views: Int
///     static let fieldRules: [String: FieldMerge] = ["/title": .lww, "/tags": .union, "/views": .counter]
/// }
/// try store.declareFieldRules(of: Note.self, for: "notes/*.json")
/// try store.save(Note(title: "Shopping", tags: ["home"], views: 0), to: "notes/shopping.json")
/// let note = try store.read(Note.self, from: "notes/shopping.json")
/// ```
///
/// Fields are named by JSON Pointer, as the encoder writes them: `/title`,
/// `/items/*/done` for a member of every element of an array. A pointer the
/// type does not encode is an error when the rules are declared
/// (`declareFieldRules(of:for:)`), never a rule that silently does nothing.
public protocol TypedDocument: Codable, Sendable {
    /// How each field merges, by JSON Pointer; a field not named merges as the structured merge merges it.
    static var fieldRules: [String: FieldMerge] { get }
    /// What must hold of the fields after a merge, by JSON Pointer.
    static var fieldInvariants: [String: [FieldCheck]] { get }
}

extension TypedDocument {
    public static var fieldRules: [String: FieldMerge] { [:] }
    public static var fieldInvariants: [String: [FieldCheck]] { [:] }

    /// The type's rules for the documents `pattern` matches, checked against the fields the type encodes.
    public static func rules(for pattern: String) throws(TruceError) -> FieldRules {
        let fields = try EncodedFields.of(Self.self)
        func checked(_ pointer: String, _ what: String) throws(TruceError) {
            let steps = FieldRule.steps(ofPointer: pointer)
            guard pointer.isEmpty || fields.contains(where: { $0.count == steps.count && zip($0, steps).allSatisfy { $0 == "*" || $0 == $1 } })
            else {
                let known = fields.filter { !$0.isEmpty }.map(FieldRule.pointer(ofSteps:)).sorted().joined(separator: ", ")
                throw .invalidConfiguration("\(what) names \(pointer), which \(Self.self) does not encode; its fields are \(known)")
            }
        }
        var rules: [FieldRule] = []
        for (pointer, merge) in fieldRules.sorted(by: { $0.key < $1.key }) {
            try checked(pointer, "the rule '\(merge.name)' of \(Self.self)")
            rules.append(FieldRule(pattern, pointer, merge))
        }
        var invariants: [FieldInvariant] = []
        for (pointer, checks) in fieldInvariants.sorted(by: { $0.key < $1.key }) {
            for check in checks {
                try checked(pointer, "the check '\(check.name)' of \(Self.self)")
                invariants.append(FieldInvariant(pattern, pointer, check))
            }
        }
        return FieldRules(rules, invariants: invariants)
    }
}

/// How a typed document is written: JSON with sorted keys, two-space indentation and a final line break, so that the
/// same value is the same bytes on every replica.
enum TypedJSON {
    static func encode<Document: TypedDocument>(_ value: Document) throws(TruceError) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        do { return try encoder.encode(value) + Data("\n".utf8) } catch {
            throw .invalidConfiguration("\(Document.self) cannot be written as JSON: \(error)")
        }
    }

    static func decode<Document: TypedDocument>(_ type: Document.Type, from data: Data, key: DocumentKey) throws(TruceError) -> Document {
        do { return try JSONDecoder().decode(type, from: data) } catch {
            throw .invalidConfiguration("\(key) cannot be read as \(Document.self): \(error)")
        }
    }
}
