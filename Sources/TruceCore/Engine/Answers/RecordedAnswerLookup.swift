import Synchronization

/// The recorded answers one call has looked up, by id, found or not: a call that settles many conflicts reads each
/// id once, however many conflicts share it (the same disagreement in many documents shares its ids).
///
/// Made per call (`Resolving.resolveAll`), so a record saved or synced in
/// by a later call is seen by that call.
final class RecordedAnswerLookup: Sendable {
    private let known = Mutex<[String: RecordedAnswer?]>([:])

    /// The records of `ids` the store holds, by id: those not looked up before in this call are read with `read`.
    func records(
        withIDs ids: [String], reading read: ([String]) throws(TruceError) -> [String: RecordedAnswer]
    ) throws(TruceError) -> [String: RecordedAnswer] {
        let unknown = known.withLock { known in ids.filter { known[$0] == nil } }
        let found = unknown.isEmpty ? [:] : try read(unknown)
        return known.withLock { known in
            for id in unknown { known[id] = .some(found[id]) }
            var records: [String: RecordedAnswer] = [:]
            for id in ids { if let record = known[id] ?? nil { records[id] = record } }
            return records
        }
    }
}
