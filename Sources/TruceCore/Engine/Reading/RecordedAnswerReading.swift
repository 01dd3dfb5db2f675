import Foundation

/// Reading the recorded answers the store holds as `.truce/answers/<id>.json` documents.
extension ReadSession {
    /// The record the document `key` holds; nil when there is none, it is deleted, or it is not a record.
    func recordedAnswer(at key: DocumentKey) throws -> RecordedAnswer? {
        guard let current = try versions(of: key).current, !current.isDeletion, let data = try contents(of: current) else { return nil }
        let id = String(key.rawValue.dropFirst(".truce/answers/".count).dropLast(".json".count))
        return RecordedAnswer(decoding: data, id: id)
    }

    /// The records of `ids` the store holds, by id; ids without one are left out.
    func recordedAnswers(withIDs ids: [String]) throws -> [String: RecordedAnswer] {
        var found: [String: RecordedAnswer] = [:]
        for id in ids {
            if let record = try recordedAnswer(at: RecordedAnswer.key(of: id)) { found[id] = record }
        }
        return found
    }
}
