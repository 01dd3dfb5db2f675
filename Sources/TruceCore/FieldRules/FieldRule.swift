import Foundation

/// One merge rule: the documents it applies to, the fields in them, and how those fields merge.
///
/// In a rules document it is one line, `DOCUMENTS FIELD RULE`:
///
/// ```
/// notes/*.json  /title  lww
/// ```
public struct FieldRule: Sendable, Hashable {
    /// A gitattributes pattern for document keys (`notes/*.json`, `*.json`, `/settings.json`).
    public let documents: String
    /// A JSON Pointer (`/title`, `/items/*/done`), where a `*` step stands for any one member or element.
    public let field: String
    public let merge: FieldMerge
    /// Where the rule was read, for people (`.truce/fields line 3`); nil for one declared in Swift.
    public let source: String?

    /// A rule declared in Swift; `init(parsing:name:)` of `FieldRules` reads them from a document.
    public init(_ documents: String, _ field: String, _ merge: FieldMerge) {
        self.init(documents: documents, field: field, merge: merge, source: nil)
    }

    init(documents: String, field: String, merge: FieldMerge, source: String?) {
        self.documents = documents
        self.field = field
        self.merge = merge
        self.source = source
    }

    /// The field's steps: `/items/*/done` is `["items", "*", "done"]` (`~1` is `/`, `~0` is `~`, as RFC 6901 has it).
    public var fieldSteps: [String] { Self.steps(ofPointer: field) }

    /// A JSON Pointer's steps (RFC 6901: `~1` is `/`, `~0` is `~`); `""` is the whole document, no step.
    public static func steps(ofPointer pointer: String) -> [String] {
        guard !pointer.isEmpty else { return [] }
        return pointer.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
            .map { $0.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~") }
    }

    /// The JSON Pointer of `steps`, escaped as RFC 6901 has it.
    public static func pointer(ofSteps steps: [String]) -> String {
        steps.map { "/" + $0.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1") }.joined()
    }

    /// True when the rule names this field: as many steps, each equal by bytes or `*`.
    public func matches(fieldSteps steps: [String]) -> Bool {
        let own = fieldSteps
        return own.count == steps.count && zip(own, steps).allSatisfy { $0 == "*" || $0.utf8.elementsEqual($1.utf8) }
    }

    /// The line a rules document holds for it.
    public var line: String { "\(documents) \(field) \(merge.name)" }
}
