import Foundation

/// An answer a person gave, recorded so that the same conflict met again is answered without asking: git's rerere,
/// kept in the store as the document `.truce/answers/<id>.json` and so shared with every replica by sync.
///
/// A record answers only a conflict whose sides are exactly the ones it was
/// recorded for: its id names them (`ConflictPoint.conflictID`, or a whole
/// document's `ConflictPoint.conflictID(of:)`), and replay compares the
/// sides it keeps byte for byte as well. So a record that arrives from
/// another replica can answer nothing else, runs nothing, and its answer
/// still passes output validation before anything is written. Replay is
/// switched off with `rerere.enabled = false` in the store's config or in
/// the synced `.truce/config`.
public struct RecordedAnswer: Sendable, Equatable {
    /// What a record answers: one conflict point, or every point of a document at once.
    public enum Scope: String, Sendable, Codable {
        /// One point, answered on its own (`--take`, a session).
        case point
        /// A whole document, answered as one file (`--content`, a mergetool).
        case document
    }

    /// The conflict's id: the point's, or the whole document's.
    public let id: String
    public let scope: Scope
    /// The JSON Pointer of a structured point; nil for text.
    public let path: String?
    /// The disagreement it answers: each hunk's sides, sorted by their bytes.
    public let hunks: [[Data]]
    /// The conflict as it was, normalized (`<<<<<<<`, sides, `>>>>>>>`, no labels, no base).
    public let preimage: Data
    /// What the person made of it; nil when they deleted the document.
    public let postimage: Data?
    /// The document the answer was given in.
    public let document: DocumentKey
    /// Who gave it, and when.
    public let recordedBy: String
    public let recordedAt: Date

    /// The document a record of `id` is kept in.
    public static func key(of id: String) -> DocumentKey {
        DocumentKey(stored: ".truce/answers/\(id).json")!
    }

    /// True when this record answers exactly `hunks`: the same sides, byte for byte.
    func answers(_ hunks: [[Data]]) -> Bool { self.hunks == hunks }

    init(
        id: String, scope: Scope, path: String?, hunks: [[Data]], preimage: Data, postimage: Data?, document: DocumentKey,
        recordedBy: String, recordedAt: Date
    ) {
        (self.id, self.scope, self.path, self.hunks, self.preimage, self.postimage) = (id, scope, path, hunks, preimage, postimage)
        (self.document, self.recordedBy, self.recordedAt) = (document, recordedBy, recordedAt)
    }
}

extension RecordedAnswer {
    /// The record's file: JSON with text as it is and other bytes as `{"base64": …}`, readable with `git show`.
    private struct File: Codable {
        var format = 1
        let id: String
        let scope: Scope
        let path: String?
        let document: String
        let recordedBy: String
        let recordedAt: String
        let hunks: [[Bytes]]
        let preimage: Bytes
        let postimage: Bytes?
    }

    /// Bytes as a JSON string when they are UTF-8, else as `{"base64": "…"}`.
    private struct Bytes: Codable {
        let data: Data
        init(_ data: Data) { self.data = data }
        init(from decoder: Decoder) throws {
            if let text = try? decoder.singleValueContainer().decode(String.self) {
                data = Data(text.utf8)
                return
            }
            let container = try decoder.container(keyedBy: CodingKeys.self)
            guard let decoded = Data(base64Encoded: try container.decode(String.self, forKey: .base64)) else {
                throw DecodingError.dataCorruptedError(forKey: .base64, in: container, debugDescription: "not base64")
            }
            data = decoded
        }
        func encode(to encoder: Encoder) throws {
            if let text = String(data: data, encoding: .utf8) {
                var container = encoder.singleValueContainer()
                try container.encode(text)
            } else {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(data.base64EncodedString(), forKey: .base64)
            }
        }
        enum CodingKeys: String, CodingKey { case base64 }
    }

    /// The record as its document holds it.
    var encoded: Data {
        let file = File(
            id: id, scope: scope, path: path, document: document.rawValue, recordedBy: recordedBy, recordedAt: ISO8601.format(recordedAt),
            hunks: hunks.map { $0.map(Bytes.init) }, preimage: Bytes(preimage), postimage: postimage.map(Bytes.init))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(file)) ?? Data()
    }

    /// The record a document holds; nil when it is not one this version of Truce reads (or names another id).
    init?(decoding data: Data, id expected: String) {
        guard let file = try? JSONDecoder().decode(File.self, from: data), file.format == 1, file.id == expected,
            let document = DocumentKey(stored: file.document), let date = ISO8601DateFormatter().date(from: file.recordedAt)
        else { return nil }
        self.init(
            id: file.id, scope: file.scope, path: file.path, hunks: file.hunks.map { $0.map(\.data) }, preimage: file.preimage.data,
            postimage: file.postimage?.data, document: document, recordedBy: file.recordedBy, recordedAt: date)
    }
}
