import Foundation

/// One place where heads disagree and a person must choose: a hunk of lines, or a value at a path in a structured document.
public struct ConflictPoint: Sendable, Equatable, Encodable {
    /// What one head holds at this point.
    public struct Side: Sendable, Equatable, Encodable {
        /// The head this side is.
        public let version: VersionID
        /// The head's device (its author name).
        public let deviceName: String
        /// True for the current version.
        public let isCurrent: Bool
        /// Where the text sits in this head; nil for a point that covers the whole document or sits at a `path`.
        public let lines: ConflictPoint.LineRange?
        /// The head's text here; nil when the head deleted the document (or, at a `path`, has no value there).
        public let text: Data?

        /// One head's side of a point: its lines and text there (nil text for a deletion).
        public init(version: VersionID, deviceName: String, isCurrent: Bool, lines: ConflictPoint.LineRange?, text: Data?) {
            self.version = version
            self.deviceName = deviceName
            self.isCurrent = isCurrent
            self.lines = lines
            self.text = text
        }

        enum CodingKeys: String, CodingKey { case version, deviceName, isCurrent, lines, text, base64, deleted }

        public func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(version, forKey: .version)
            try container.encode(deviceName, forKey: .deviceName)
            try container.encode(isCurrent, forKey: .isCurrent)
            try container.encodeIfPresent(lines, forKey: .lines)
            try encodeText(text, into: &container, text: .text, base64: .base64, deleted: .deleted)
        }
    }

    /// A stable name for the point, `H1`, `H2`, … in the order of the base.
    public let id: String
    /// Where the point sits in the base; nil for a point that covers the whole document or sits at a `path`.
    public let baseLines: ConflictPoint.LineRange?
    /// The base's text here; nil when the heads have no common base (or, at a `path`, the base has no value there).
    public let base: Data?
    /// Every head's text here, current first.
    public let sides: [Side]
    /// Where the point sits in a structured document, as a JSON Pointer (`/editor/theme`); nil for a hunk of lines.
    public let path: String?
    /// Why the heads disagree here, for people (`changed differently on both sides`); nil when a hunk says it by itself.
    public let reason: String?
    /// True when the point covers the whole document (binary content, or a head deleted it).
    public var isWholeDocument: Bool { baseLines == nil && path == nil }

    /// A point with the base and every head at it; `path` and `reason` for a point in a structure.
    public init(id: String, baseLines: ConflictPoint.LineRange?, base: Data?, sides: [Side], path: String? = nil, reason: String? = nil) {
        self.id = id
        self.baseLines = baseLines
        self.base = base
        self.sides = sides
        self.path = path
        self.reason = reason
    }

    enum CodingKeys: String, CodingKey { case id, path, reason, baseLines, base, baseBase64, baseDeleted, sides }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encodeIfPresent(path, forKey: .path)
        try container.encodeIfPresent(reason, forKey: .reason)
        try container.encodeIfPresent(baseLines, forKey: .baseLines)
        try encodeText(base, into: &container, text: .base, base64: .baseBase64, deleted: .baseDeleted)
        try container.encode(sides, forKey: .sides)
    }
}

/// Text as a JSON string when it is UTF-8, as base64 under another key when it is not.
private func encodeText<Key: CodingKey>(_ data: Data?, into container: inout KeyedEncodingContainer<Key>, text: Key, base64: Key, deleted: Key) throws
{
    guard let data else {
        try container.encode(true, forKey: deleted)
        return
    }
    if let string = String(data: data, encoding: .utf8) {
        try container.encode(string, forKey: text)
    } else {
        try container.encode(data.base64EncodedString(), forKey: base64)
    }
}

extension ConflictPoint {
    /// A range of lines, numbered from 1 as editors and `git diff` number them.
    public struct LineRange: Sendable, Equatable, Codable, CustomStringConvertible {
        /// The first line, counted from 1.
        public let start: Int
        /// The number of lines; 0 is an insertion before `start`.
        public let count: Int

        /// `count` lines from line `start`.
        public init(start: Int, count: Int) {
            self.start = start
            self.count = count
        }

        public var description: String {
            count == 0 ? "before line \(start)" : count == 1 ? "line \(start)" : "lines \(start)-\(start + count - 1)"
        }
    }
}
