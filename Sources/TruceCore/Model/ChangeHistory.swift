import Foundation
internal import TruceGit

/// The changes after a token, oldest first, and the token to ask from next time.
public struct ChangeHistory: Sendable, Codable {
    /// The changes since the token asked with, oldest first.
    public let changes: [Change]
    /// The token to ask with next time: it stands after the last change listed.
    public let token: ChangeHistory.Token
}

extension ChangeHistory {
    /// An opaque position in a store's change history, the counterpart of `NSPersistentHistoryToken`.
    ///
    /// Its text form (`description`) can be kept anywhere and given back to `changes(since:)`.
    public struct Token: Sendable, Hashable, Codable, CustomStringConvertible {
        /// The journal entry the token stands after; nil for the start of the history.
        let entry: ObjectID?
        /// The last save listed from the save log, past `entry`: once it lands, it and the saves before it in the same
        /// journal entry were listed already. nil when none was.
        let loggedMark: VersionID?

        /// The start of the history: every change comes after it.
        public static let beginning = ChangeHistory.Token(entry: nil)

        /// Reads a token's text form; nil when it is not one.
        public init?(_ text: String) {
            guard text.hasPrefix("t1-") else { return nil }
            let parts = text.dropFirst(3).split(separator: "+", maxSplits: 1, omittingEmptySubsequences: false)
            guard let hex = parts.first, let id = ObjectID(hex: String(hex)) else { return nil }
            entry = id == ObjectID.zero ? nil : id
            if parts.count == 2 {
                guard let mark = ObjectID(hex: String(parts[1])), mark != ObjectID.zero else { return nil }
                loggedMark = VersionID(mark)
            } else {
                loggedMark = nil
            }
        }

        init(entry: ObjectID?, loggedMark: VersionID? = nil) { (self.entry, self.loggedMark) = (entry, loggedMark) }

        public var description: String {
            "t1-" + (entry?.hex ?? ObjectID.zero.hex) + (loggedMark.map { "+" + $0.hex } ?? "")
        }

        public init(from decoder: Decoder) throws {
            let text = try decoder.singleValueContainer().decode(String.self)
            guard let token = ChangeHistory.Token(text) else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a change token: \(text)"))
            }
            self = token
        }

        public func encode(to encoder: Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(description)
        }
    }
}
