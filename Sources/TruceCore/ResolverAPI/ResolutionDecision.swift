import Foundation

/// What an automatic resolver kept and what it replaced at one place of a document.
///
/// A resolver reports its decisions through ``ResolutionContext/record(_:)``;
/// the store writes them into the resolution commit's message, where `git
/// show` reads them, and ``DocumentStore/review(_:since:resolver:)`` lists
/// them so that a person can bring a dropped value back
/// (``DocumentStore/restore(_:registry:device:)``). A decision is a record, not an
/// instruction: it never changes what the resolution holds.
///
/// ```swift
/// context.record(ResolutionDecision(
///     point: "/theme", rule: "the latest change wins",
///     kept: .init(phone.version, content: Data(#""dark""#.utf8)),
///     dropped: [.init(laptop.version, content: Data(#""light""#.utf8))]))
/// ```
public struct ResolutionDecision: Sendable, Hashable, Encodable {
    /// One version's value at the decision's place.
    public struct Value: Sendable, Hashable, Encodable {
        /// The head the value comes from.
        public let version: VersionID
        /// That head's device (its author name).
        public let deviceName: String
        /// That head's author date.
        public let modificationDate: Date
        /// The value's bytes at the place, as the resolver gave them (JSON text for a JSON document).
        ///
        /// nil when the version has nothing there (a key it removed), and
        /// for a decision about the whole document, whose value is the
        /// version itself. A value read back from a resolution commit may be
        /// cut (`isCut`): the commit keeps the first bytes of a long value,
        /// and the version holds the rest.
        public let content: Data?
        /// The size of the whole value in bytes; `content.count` unless the value was cut.
        public let size: Int

        /// True when `content` holds only the first bytes of the value: read the rest from `version`.
        public var isCut: Bool { (content?.count ?? 0) < size }

        /// The value `version` holds at the decision's place: its bytes there, or nil when it has nothing there.
        ///
        /// For a decision about the whole document, give nil: the version
        /// is the value. The store writes the version's device and date
        /// as its commit records them.
        public init(_ version: Version, content: Data?) {
            self.init(version: version.id, deviceName: version.deviceName, modificationDate: version.modificationDate, content: content)
        }

        init(version: VersionID, deviceName: String, modificationDate: Date, content: Data?, size: Int? = nil) {
            self.version = version
            self.deviceName = deviceName
            self.modificationDate = modificationDate
            self.content = content
            self.size = size ?? content?.count ?? 0
        }

        enum CodingKeys: String, CodingKey { case version, deviceName, modificationDate, text, base64, absent, size, isCut }

        /// The bytes as a JSON string when they are UTF-8, as base64 under `base64` when not; `absent` when there are none.
        public func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(version, forKey: .version)
            try container.encode(deviceName, forKey: .deviceName)
            try container.encode(modificationDate, forKey: .modificationDate)
            if let content {
                if let text = String(validating: content, as: UTF8.self) {
                    try container.encode(text, forKey: .text)
                } else {
                    try container.encode(content.base64EncodedString(), forKey: .base64)
                }
                try container.encode(size, forKey: .size)
                try container.encode(isCut, forKey: .isCut)
            } else {
                try container.encode(true, forKey: .absent)
            }
        }
    }

    /// Where: a JSON Pointer (`/theme`), a record's key (`uuid="7f3c"`), or the resolver's own name for a place; nil
    /// for the whole document.
    public let point: String?
    /// Why the kept value won, in a few words for people (`the latest change wins`).
    public let rule: String
    /// The value the resolution holds; nil when it holds no single head's value there (the edits were merged).
    public let kept: Value?
    /// The values the resolution does not hold: each head whose value at `point` was replaced.
    public let dropped: [Value]

    /// A decision at `point` (nil: the whole document): `kept` stayed, `dropped` were replaced, by `rule`.
    public init(point: String?, rule: String, kept: Value?, dropped: [Value]) {
        self.point = point
        self.rule = rule
        self.kept = kept
        self.dropped = dropped
    }

    /// A decision about the whole document: the resolution holds `kept` (nil: none of the heads whole) and none of `dropped`.
    public static func wholeDocument(rule: String, kept: Version?, dropped: [Version]) -> ResolutionDecision {
        ResolutionDecision(
            point: nil, rule: rule, kept: kept.map { Value($0, content: nil) }, dropped: dropped.map { Value($0, content: nil) })
    }

    /// True for a decision about the whole document rather than one place in it.
    public var isWholeDocument: Bool { point == nil }
}

extension ResolutionDecision {
    /// The decision a resolver makes by keeping `kept` whole: every other head of `conflict` is dropped.
    static func keeping(_ kept: ConflictSet.Side, of conflict: ConflictSet) -> ResolutionDecision {
        .wholeDocument(
            rule: "one version kept whole", kept: kept.version,
            dropped: conflict.heads.map(\.version).filter { $0.id != kept.version.id })
    }
}
