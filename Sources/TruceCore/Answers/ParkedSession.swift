import Foundation
internal import TruceGit

/// A session put aside with some points answered, as the document `.truce/sessions/<key hash>` holds it: JSON that
/// syncs like any document, so the person continues on this device or another.
///
///     {"format": 1, "document": "notes/todo.md", "heads": ["5d2a…", "9c1e…"], "parkedBy": "laptop",
///      "parkedAt": "2026-12-02T09:00:00Z",
///      "answers": [{"point": "H1", "conflict": "<conflict id>", "answer": "theirs", "text": "buy oat milk\n"}]}
///
/// Each answer keeps the point's `conflictID` and the text it puts there,
/// so a later session finds it again by content after new versions moved or
/// renumbered the points.
struct ParkedSession: Codable, Sendable {
    struct Answer: Codable, Sendable {
        /// The point's id when parked (`H1`), for people reading the document.
        let point: String
        /// The point's `conflictID`: how a later session finds it again.
        let conflict: String
        /// The answer as `--take` spells it (`text` for a person's own).
        let answer: String
        /// The text the answer put at the point; absent when it deleted the document.
        let text: String?
        /// The same, base64-encoded, when it is not UTF-8.
        let base64: String?

        var result: Data? {
            if let text { return Data(text.utf8) }
            return base64.flatMap { Data(base64Encoded: $0) }
        }
    }

    static let format = 1
    let format: Int
    let document: String
    let heads: [String]
    let parkedBy: String
    let parkedAt: String
    let answers: [Answer]

    /// Where a document's parked session lives: keyed by the document's hash, whatever its key holds.
    static func key(for document: DocumentKey) -> DocumentKey {
        DocumentKey(stored: ".truce/sessions/" + ObjectID.blobHash(of: document.rawValue.utf8).hex + ".json")!
    }

    init(_ session: ResolutionSession, device: String, date: Date) throws(TruceError) {
        format = Self.format
        document = session.key.rawValue
        heads = session.heads.map(\.id.hex)
        parkedBy = device
        parkedAt = ISO8601.format(date)
        var answers: [Answer] = []
        for point in session.points {
            guard let answer = session.answers[point.id] else { continue }
            let result = try session.text(of: answer, at: point.id)
            let isText = result.flatMap { String(data: $0, encoding: .utf8) }
            answers.append(
                Answer(
                    point: point.id, conflict: point.conflictID, answer: answer.description, text: isText,
                    base64: isText == nil ? result?.base64EncodedString() : nil))
        }
        self.answers = answers
    }

    var encoded: Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)) ?? Data()
    }

    /// The parked session a document holds; nil when it is not one this version of Truce reads.
    init?(decoding data: Data) {
        guard let parked = try? JSONDecoder().decode(ParkedSession.self, from: data), parked.format == Self.format else { return nil }
        self = parked
    }

    /// The answers that still apply to `points`, matched by content, and what became of the rest.
    ///
    /// With the same heads, each answer comes back as it was given. After new
    /// versions arrived, a symbolic answer (`ours`, a version) could now name
    /// another text, so the text it put there is kept instead: as the version
    /// whose side holds that text when one does, else as the person's own text.
    func answers(for points: [ConflictPoint], heads current: [Version]) -> (answers: [String: HunkAnswer], resumption: ResolutionSession.Resumption) {
        let sameHeads = Set(current.map(\.id.hex)) == Set(heads)
        var kept: [String: HunkAnswer] = [:]
        for parked in answers {
            guard let point = points.first(where: { $0.conflictID == parked.conflict }) else { continue }
            if sameHeads, let answer = HunkAnswer(choice: parked.answer) {
                kept[point.id] = answer
            } else if let side = point.sides.first(where: { $0.text == parked.result }) {
                kept[point.id] = .version(side.version.hex)
            } else if let result = parked.result {
                kept[point.id] = .text(result)
            }
        }
        let resumption = ResolutionSession.Resumption(
            parkedBy: parkedBy, parkedAt: ISO8601DateFormatter().date(from: parkedAt) ?? .distantPast, newVersionsArrived: !sameHeads,
            kept: kept.count, dropped: answers.count - kept.count)
        return (kept, resumption)
    }
}
