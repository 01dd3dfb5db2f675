import Foundation

/// What must hold of a JSON field after an automatic merge: a merge that breaks it is not written, and the field goes to
/// a person instead, whose answer is checked again.
///
/// Written in a rules document as the third word of a line, in place of a rule (`notes/*.json /title required`).
public enum FieldCheck: Sendable, Hashable {
    /// The field is there.
    case required
    /// The field, when there, is of this JSON type: `string`, `number`, `boolean`, `object`, `array` or `null`.
    case type(String)
    /// The array holds objects whose `member` values are all different.
    case unique(String)
    /// The array holds at most this many elements (an object, members).
    case maxCount(Int)
    /// The number (or string) is at least the one at another field (`/end` `at-least=/start`), when both are there.
    case atLeast(String)
    /// The number (or string) is at most the one at another field.
    case atMost(String)

    /// The JSON types `type=` names.
    public static let types = ["string", "number", "boolean", "object", "array", "null"]

    /// The check's words in a rules document.
    public var name: String {
        switch self {
        case .required: "required"
        case .type(let type): "type=\(type)"
        case .unique(let member): "unique=\(member)"
        case .maxCount(let count): "max-count=\(count)"
        case .atLeast(let field): "at-least=\(field)"
        case .atMost(let field): "at-most=\(field)"
        }
    }

    /// The check a rules document names, nil for words no check has.
    public init?(name: String) {
        let (word, value) = name.firstIndex(of: "=").map { (String(name[..<$0]), String(name[name.index(after: $0)...])) } ?? (name, "")
        switch word {
        case "required" where value.isEmpty && !name.contains("="): self = .required
        case "type" where Self.types.contains(value): self = .type(value)
        case "unique" where !value.isEmpty: self = .unique(value)
        case "max-count":
            guard let count = Int(value), count >= 0 else { return nil }
            self = .maxCount(count)
        case "at-least" where value.hasPrefix("/"): self = .atLeast(value)
        case "at-most" where value.hasPrefix("/"): self = .atMost(value)
        default: return nil
        }
    }

    /// Every check a rules document can name, for messages.
    public static let names = ["required", "type=TYPE", "unique=MEMBER", "max-count=N", "at-least=/FIELD", "at-most=/FIELD"]
}

/// One check of a field in the documents a pattern matches (see ``FieldCheck``).
public struct FieldInvariant: Sendable, Hashable {
    public let documents: String
    /// A JSON Pointer; a `*` step is any one member or element, and the check holds for each.
    public let field: String
    public let check: FieldCheck
    /// Where it was read (`.truce/fields line 7`); nil for one declared in Swift.
    public let source: String?

    public init(_ documents: String, _ field: String, _ check: FieldCheck) {
        self.init(documents: documents, field: field, check: check, source: nil)
    }

    init(documents: String, field: String, check: FieldCheck, source: String?) {
        self.documents = documents
        self.field = field
        self.check = check
        self.source = source
    }

    /// The line a rules document holds for it.
    public var line: String { "\(documents) \(field) \(check.name)" }

    /// The field's steps, as ``FieldRule/fieldSteps`` reads them.
    public var fieldSteps: [String] { FieldRule.steps(ofPointer: field) }
}
