import Foundation
internal import TruceGit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The store's `info/attributes`, read line by line so that Truce can say which line picked a resolver.
///
/// libgit2 decides the attribute's value (so Truce and `git check-attr`
/// agree); this reader only finds the line that set it, and rejects lines
/// git itself would ignore with a warning.
struct AttributesFile {
    struct Line {
        let number: Int
        let text: String
        let pattern: String
        /// What the line does to the `merge` attribute, nil when it does not touch it.
        let merge: AttributeValue?
    }

    /// The file's name in messages: `info/attributes`, or the synced `.truce/attributes`.
    let name: String
    let lines: [Line]

    /// Reads `path`; a missing file has no lines.
    init(path: String) throws(TruceError) {
        try self.init(FileManager.default.contents(atPath: path) ?? Data(), name: "info/attributes")
    }

    /// Parses `data`, a file in gitattributes syntax called `name` in messages.
    init(_ data: Data, name: String) throws(TruceError) {
        self.name = name
        guard let text = String(data: data, encoding: .utf8) else {
            throw .invalidConfiguration("\(name) is not UTF-8 text")
        }
        var macros: [String: AttributeValue] = ["binary": .unset]
        var parsed: [Line] = []
        // "\r\n" is a single Character in Swift, so splitting at "\n" alone would leave a CRLF file as one line;
        // git reads CRLF lines as lines.
        let rawLines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
        for (index, raw) in rawLines.enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            let number = index + 1
            if fields[0].hasPrefix("[attr]") {
                let macro = String(fields[0].dropFirst(6))
                macros[macro] = try Self.mergeEffect(of: fields.dropFirst(), macros: macros, file: name, line: number) ?? macros[macro]
                continue
            }
            if fields[0].hasPrefix("!") {
                throw .invalidConfiguration("\(name) line \(number): negative patterns are not allowed in gitattributes ('\(line)')")
            }
            let merge = try Self.mergeEffect(of: fields.dropFirst(), macros: macros, file: name, line: number)
            parsed.append(Line(number: number, text: line, pattern: fields[0], merge: merge))
        }
        lines = parsed
    }

    /// The last line that sets `merge` for `key` to `value`: the line that decided it.
    func decidingLine(for key: DocumentKey, value: AttributeValue) -> Line? {
        lines.last { $0.merge == value && Self.matches(pattern: $0.pattern, path: key.rawValue) }
    }

    /// The last line that matches `key` and sets, unsets or names its `merge` attribute: how gitattributes decides.
    func lastMergeLine(for key: DocumentKey) -> Line? {
        lines.last { line in
            guard let merge = line.merge, merge != .unspecified else { return false }
            return Self.matches(pattern: line.pattern, path: key.rawValue)
        }
    }

    private static func mergeEffect(
        of fields: ArraySlice<String>, macros: [String: AttributeValue], file: String,
        line: Int
    ) throws(TruceError) -> AttributeValue? {
        var effect: AttributeValue?
        for field in fields {
            switch field {
            case "merge": effect = .set
            case "-merge": effect = .unset
            case "!merge": effect = .unspecified
            case _ where field.hasPrefix("merge="):
                let value = String(field.dropFirst(6))
                guard !value.isEmpty else { throw .invalidConfiguration("\(file) line \(line): 'merge=' needs a resolver name") }
                effect = .value(value)
            default:
                if let macro = macros[field] { effect = macro }
            }
        }
        return effect
    }

    /// gitattributes matching: a pattern without a slash matches the file name at any depth, one with a
    /// slash matches the whole path from the store's root.
    static func matches(pattern: String, path: String) -> Bool {
        var pattern = pattern
        if pattern.hasSuffix("/") { return false }  // directories only; documents are files
        if !pattern.contains("/") {
            let name = String(DocumentKey.segments(of: path).last ?? Substring(path))
            return fnmatch(pattern, name, 0) == 0
        }
        if pattern.hasPrefix("/") { pattern.removeFirst() }
        if pattern.hasPrefix("**/") {
            let rest = String(pattern.dropFirst(3))
            let segments = DocumentKey.segments(of: path)
            return segments.indices.contains { matches(pattern: "/" + rest, path: segments[$0...].joined(separator: "/")) }
        }
        // `**` spans directories; git's wildmatch does this, fnmatch without FNM_PATHNAME comes close.
        let flags: Int32 = pattern.contains("**") ? 0 : FNM_PATHNAME
        return fnmatch(pattern, path, flags) == 0
    }
}
