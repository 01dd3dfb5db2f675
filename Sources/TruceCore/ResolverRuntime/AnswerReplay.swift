import Foundation

/// The recorded answers that match a conflict, and what replaying them makes of it: git's rerere, tried before any
/// resolver of the chain.
///
/// A record matches only when its id and its sides are the conflict's, byte
/// for byte: one for the whole image (an answer given as one file), or one
/// per point of the chain's (answers given point by point). The ids are
/// worked out first and the records read in one go, so a conflict nobody
/// answered before costs one lookup per id and no second analysis.
struct AnswerReplay: Sendable {
    /// The conflict as one file with markers; nil when it cannot be one.
    let image: ConflictImage?
    /// The record answering the whole document, if any.
    let document: RecordedAnswer?
    /// The records answering single points, by point id.
    let points: [String: RecordedAnswer]
    /// Every point of the conflict, as the chain sees them.
    let all: [ConflictPoint]

    /// The records that answer `conflict` (the contested set) as `chain` sees it; `records` reads the records of
    /// the ids it is given, leaving out those the store does not hold.
    static func matching(
        _ conflict: ConflictSet, chain: ResolverChain, records: ([String]) throws(TruceError) -> [String: RecordedAnswer]
    ) async throws(TruceError) -> AnswerReplay {
        let image = try ConflictRecording.image(of: conflict)
        let all = try await BlockingExecutor.preferring { () async throws(TruceError) in try await chain.conflictPoints(of: conflict) }
        // Each id is a hash of the point's sides: worked out once, for the lookup and the match.
        let pointIDs = all.map(\.conflictID)
        let imageID = image?.id
        let found = try records(Array(Set(pointIDs + [imageID].compactMap { $0 })))
        var document: RecordedAnswer?
        if let image, let imageID, let record = found[imageID], record.scope == .document, record.answers(image.hunks) {
            document = record
        }
        var points: [String: RecordedAnswer] = [:]
        for (point, id) in zip(all, pointIDs) {
            guard let record = found[id], record.scope == .point, record.answers(ConflictRecording.hunk(of: point).hunks) else { continue }
            points[point.id] = record
        }
        return AnswerReplay(image: image, document: document, points: points, all: all)
    }

    /// The content the matched records make of `conflict`, when they answer all of it; nil otherwise.
    ///
    /// A record of the whole document is replayed as git's rerere replays
    /// one (a three-way merge of its preimage, this conflict and its
    /// postimage); else, when every point has a record, their answers are
    /// given as a person's would be. The content is what the chain's own
    /// way of applying answers makes of them, so the same records give the
    /// same resolution on every replica.
    func replayed(on conflict: ConflictSet, chain: ResolverChain) async throws(TruceError) -> (content: Data?, records: [RecordedAnswer])? {
        if let record = document, let image {
            guard let postimage = record.postimage else { return (nil, [record]) }
            if let content = try image.replaying(preimage: record.preimage, postimage: postimage) { return (content, [record]) }
        }
        guard !all.isEmpty, points.count == all.count else { return nil }
        var answers: [String: HunkAnswer] = [:]
        for point in all {
            let record = points[point.id]!
            if let postimage = record.postimage {
                answers[point.id] = .text(postimage)
            } else if let side = point.sides.first(where: { $0.text == nil }) {
                answers[point.id] = .version(side.version.hex)
            } else if point.base == nil, conflict.base != nil {
                answers[point.id] = .base
            } else {
                return nil
            }
        }
        let content = try await BlockingExecutor.preferring { () async throws(TruceError) in try await chain.applying(answers, to: conflict) }
        return (content, all.map { points[$0.id]! })
    }
}
