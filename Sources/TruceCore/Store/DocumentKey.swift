import Foundation

/// The name of a document in a store, like `notes/todo.md`.
///
/// Relative and `/`-separated, with no empty, `.`, `..` or `.git` segment, no
/// NUL or other control character, at most 1024 bytes of UTF-8. A key is
/// never put into a reference name as it is: refs use its hash
/// (see `ReferenceLayout`), so any valid key is safe whatever it holds.
public struct DocumentKey: Hashable, Comparable, Sendable, Codable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The key as the user wrote it.
    public let rawValue: String

    /// The longest key accepted, in bytes of UTF-8.
    public static let maximumLength = 1024

    /// Validates `rawValue`; throws `TruceError.invalidKey` saying which rule it breaks.
    public init(_ rawValue: String) throws(TruceError) {
        if let reason = Self.problem(with: rawValue) { throw .invalidKey(rawValue, reason: reason) }
        self.rawValue = rawValue
    }

    /// A key written in source code; an invalid literal is a programming error.
    public init(stringLiteral value: String) {
        do { try self.init(value) } catch { preconditionFailure("\(error.localizedDescription)") }
    }

    public init(from decoder: Decoder) throws {
        try self.init(try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { rawValue }

    public static func < (lhs: DocumentKey, rhs: DocumentKey) -> Bool { lhs.rawValue.utf8.lexicographicallyPrecedes(rhs.rawValue.utf8) }

    // By bytes, not String's canonical equivalence: `café` in NFC and in NFD are two documents, as they are two files.
    public static func == (lhs: DocumentKey, rhs: DocumentKey) -> Bool { lhs.rawValue.utf8.elementsEqual(rhs.rawValue.utf8) }

    public func hash(into hasher: inout Hasher) {
        for byte in rawValue.utf8 { hasher.combine(byte) }
    }

    /// The segments between slashes.
    var segments: [Substring] { rawValue.split(separator: "/", omittingEmptySubsequences: false) }

    /// Why `text` is not a valid key, or nil when it is one.
    static func problem(with text: String) -> String? {
        let bytes = text.utf8
        if bytes.isEmpty { return "it is empty" }
        if bytes.count > maximumLength { return "it is \(bytes.count) bytes long; the limit is \(maximumLength)" }
        if text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F || (0x80..<0xA0).contains($0.value) }) {
            return "it contains a NUL or control character"
        }
        if text.hasPrefix("/") { return "it is absolute; keys are relative to the store" }
        if text.hasSuffix("/") { return "it ends with '/'" }
        for segment in text.split(separator: "/", omittingEmptySubsequences: false) {
            switch segment {
            case "": return "it has an empty segment ('//')"
            case ".": return "it has a '.' segment"
            case "..": return "it has a '..' segment"
            case _ where segment.lowercased() == ".git": return "it has a '.git' segment, which git forbids in trees"
            default: continue
            }
        }
        return nil
    }
}
