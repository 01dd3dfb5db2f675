import Foundation
internal import TruceGit

/// The name of a document in a store, like `notes/todo.md`.
///
/// Relative and `/`-separated, with no empty, `.` or `..` segment and no
/// segment git treats as `.git`, `.gitmodules` or `.gitattributes` in any
/// spelling (see `GitReservedNames`), no NUL or other control character, at
/// most 1024 bytes of UTF-8. A key is never put into a reference name as it
/// is: refs use its hash (see `ReferenceLayout`), so any valid key is safe
/// whatever it holds.
///
/// Keys are bytes, as paths are to git: two keys are equal only when their
/// UTF-8 is, so `café` in NFC and in NFD are two documents. Segments split at
/// the byte `/`, never at grapheme boundaries (a `/` followed by a combining
/// mark is still a separator).
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

    /// A key read back from a store: the rules of its shape apply, not the list of reserved git spellings,
    /// which grew after some stores were written; an old journal entry must not make the whole journal unreadable.
    init?(stored rawValue: String) {
        guard Self.problem(with: rawValue, checkingReservedNames: false) == nil else { return nil }
        self.rawValue = rawValue
    }

    /// A key validated already (an import stream's, when it was parsed): not checked again.
    init(checked rawValue: String) { self.rawValue = rawValue }

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

    public static func < (lhs: DocumentKey, rhs: DocumentKey) -> Bool { ByteOrder.precedes(lhs.rawValue, rhs.rawValue) }

    /// Equal when the UTF-8 bytes are, not by Unicode canonical equivalence as `String` compares.
    public static func == (lhs: DocumentKey, rhs: DocumentKey) -> Bool { ByteOrder.equal(lhs.rawValue, rhs.rawValue) }

    public func hash(into hasher: inout Hasher) {
        // The bytes in one call where the string holds them contiguously (native strings do): a sync of 100,000
        // documents hashes keys a million times, and one `combine` per byte was a tenth of its time.
        let hashed: Void? = rawValue.utf8.withContiguousStorageIfAvailable { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        if hashed == nil { for byte in rawValue.utf8 { hasher.combine(byte) } }
    }

    /// True when `text`'s UTF-8 bytes are this key's.
    func hasBytes(of text: String) -> Bool { rawValue.utf8.elementsEqual(text.utf8) }

    /// The segments between slashes.
    var segments: [Substring] { Self.segments(of: rawValue) }

    /// True for the documents Truce keeps for people's answers, beside the app's own: parked sessions
    /// (`.truce/sessions/`) and recorded answers (`.truce/answers/`). They sync, and appear in `changes` and `events`
    /// like any document; `exportDocuments` leaves them out.
    public var isTruceRecord: Bool {
        rawValue.utf8.starts(with: ".truce/sessions/".utf8) || rawValue.utf8.starts(with: ".truce/answers/".utf8)
    }

    /// The last segment: the file name.
    public var lastSegment: Substring { segments.last ?? Substring(rawValue) }

    /// The file name's extension after its last `.`, lowercased in ASCII; empty when the name has no `.`.
    public var fileExtension: String {
        let name = lastSegment.utf8
        guard let dot = name.lastIndex(of: UInt8(ascii: ".")) else { return "" }
        return String(decoding: name[name.index(after: dot)...].map { (0x41...0x5A).contains($0) ? $0 + 32 : $0 }, as: UTF8.self)
    }

    /// `text` split at each byte `/`: unlike `String.split`, a `/` that a combining mark follows still splits.
    static func segments(of text: String) -> [Substring] { text.pieces(separatedBy: UInt8(ascii: "/")) }

    /// Why `text` is not a valid key, or nil when it is one.
    static func problem(with text: String, checkingReservedNames: Bool = true) -> String? {
        let bytes = text.utf8
        if bytes.isEmpty { return "it is empty" }
        if bytes.count > maximumLength { return "it is \(bytes.count) bytes long; the limit is \(maximumLength)" }
        if text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F || (0x80..<0xA0).contains($0.value) }) {
            return "it contains a NUL or control character"
        }
        if bytes.first == UInt8(ascii: "/") { return "it is absolute; keys are relative to the store" }
        if bytes.last == UInt8(ascii: "/") { return "it ends with '/'" }
        for segment in segments(of: text) {
            if segment.utf8.isEmpty { return "it has an empty segment ('//')" }
            if segment.utf8.elementsEqual(".".utf8) { return "it has a '.' segment" }
            if segment.utf8.elementsEqual("..".utf8) { return "it has a '..' segment" }
            if checkingReservedNames, let reserved = GitReservedNames.reservedName(of: segment) {
                return reserved == ".git" && segment.utf8.count == 4
                    ? "it has a '.git' segment, which git forbids in trees"
                    : "its segment \(TruceError.quoted(String(segment))) is how HFS+ or NTFS may spell '\(reserved)', which git refuses in trees"
            }
        }
        return nil
    }
}
