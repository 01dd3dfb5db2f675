import Foundation

/// The merge rules of a store's JSON fields, read from its rules documents or declared in Swift: one model for both.
///
/// A rules document holds one rule a line, `DOCUMENTS FIELD RULE`, with
/// `#` comments and blank lines:
///
/// ```
/// # .truce/fields: synced, so every replica merges alike
/// notes/*.json  /title        lww
/// notes/*.json  /tags         union
/// notes/*.json  /body         text
/// notes/*.json  /items        id=id
/// notes/*.json  /items/*/done lww
/// ```
///
/// `DOCUMENTS` is a gitattributes pattern, `FIELD` a JSON Pointer in which
/// a `*` step is any one member or element, `RULE` a ``FieldMerge`` name.
/// Where several rules name one field, the last one decides, as in
/// gitattributes. A store reads its local `info/fields` first and the synced
/// `.truce/fields` after it, so the synced one decides. The rules apply where
/// a document is merged by structure (`merge=structured`); a field no rule
/// names merges as `structured` merges it.
public struct FieldRules: Sendable, Hashable {
    public var rules: [FieldRule]
    /// What must hold after an automatic merge (`notes/*.json /end at-least=/start`).
    public var invariants: [FieldInvariant]

    public init(_ rules: [FieldRule] = [], invariants: [FieldInvariant] = []) {
        self.rules = rules
        self.invariants = invariants
    }

    /// Reads a rules document; `name` says where it is, for errors. Every malformed line is reported, with its number,
    /// in one `TruceError.invalidConfiguration`.
    public init(parsing data: Data, name: String) throws(TruceError) {
        let problems = Self.check(data, name: name)
        guard problems.isEmpty else { throw .invalidConfiguration(problems.joined(separator: "; ")) }
        (rules, invariants) = {
            let read = Self.read(data, name: name)
            return (read.rules, read.invariants)
        }()
    }

    /// Every problem of a rules document, one per line that has one (`.truce/fields line 4: …`); empty when it is sound.
    public static func check(_ data: Data, name: String) -> [String] { read(data, name: name).problems }

    /// The rules `key` is subject to, in the order they were read.
    public func rules(for key: DocumentKey) -> [FieldRule] {
        rules.filter { key.matches($0.documents) }
    }

    /// The invariants `key` is subject to.
    public func invariants(for key: DocumentKey) -> [FieldInvariant] {
        invariants.filter { key.matches($0.documents) }
    }

    /// The rules and invariants as a rules document.
    public var text: String { (rules.map(\.line) + invariants.map(\.line)).map { $0 + "\n" }.joined() }

    private static func read(_ data: Data, name: String) -> (rules: [FieldRule], invariants: [FieldInvariant], problems: [String]) {
        var rules: [FieldRule] = []
        var invariants: [FieldInvariant] = []
        var problems: [String] = []
        guard let text = String(data: data, encoding: .utf8) else { return ([], [], ["\(name): is not UTF-8 text"]) }
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.hasSuffix("\r") ? rawLine.dropLast() : rawLine
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            guard let first = fields.first, !first.hasPrefix("#") else { continue }
            let here = "\(name) line \(index + 1)"
            func problem(_ text: String) { problems.append("\(here): \(text) ('\(line)')") }
            guard fields.count == 3 else {
                problem("expected DOCUMENTS FIELD RULE, three words, found \(fields.count)")
                continue
            }
            guard fields[1].isEmpty || fields[1].hasPrefix("/") else {
                problem("the field '\(fields[1])' is not a JSON Pointer: it starts with '/'")
                continue
            }
            let merge = FieldMerge(name: fields[2]), check = FieldCheck(name: fields[2])
            guard merge != nil || check != nil else {
                problem(
                    "unknown rule or check '\(fields[2])'; rules are \(FieldMerge.names.joined(separator: ", ")); "
                        + "checks are \(FieldCheck.names.joined(separator: ", "))")
                continue
            }
            do { try RoutingRules.checkRoutePattern(fields[0]) } catch {
                problem("the documents pattern '\(fields[0])' \(error.reasonText)")
                continue
            }
            if let merge { rules.append(FieldRule(documents: fields[0], field: fields[1], merge: merge, source: here)) }
            if let check { invariants.append(FieldInvariant(documents: fields[0], field: fields[1], check: check, source: here)) }
        }
        return (rules, invariants, problems)
    }
}

extension TruceError {
    /// The reason of an `invalidRoute`, else the whole description.
    fileprivate var reasonText: String {
        if case .invalidRoute(_, let reason) = self { return "cannot be read as git reads it: \(reason)" }
        return errorDescription ?? "\(self)"
    }
}

extension DocumentKey {
    /// True when the gitattributes pattern `pattern` matches this key, as `.truce/attributes` and `git check-attr` read
    /// it: a pattern without a slash matches the file name at any depth, one with a slash the whole path.
    public func matches(_ pattern: String) -> Bool { AttributesFile.matches(pattern: pattern, path: rawValue) }
}
