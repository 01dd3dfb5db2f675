import Foundation

/// What the recorded answers see of a conflict: the image of the whole document (git's rerere, for answers given as
/// one file) and each point's hunk (for answers given point by point).
enum ConflictRecording {
    /// The conflict as one file with markers, normalized; nil when it cannot be one (binary content, a deletion, no
    /// hunk): two heads merged as `git merge` would leave them, more heads with a hunk per point.
    static func image(of conflict: ConflictSet) throws(TruceError) -> ConflictImage? {
        let heads = conflict.heads.compactMap(\.content)
        guard heads.count == conflict.heads.count else { return nil }
        if heads.count == 2 {
            guard let merged = try TextMerge.merge(base: conflict.base?.content ?? Data(), ours: heads[0], theirs: heads[1]), !merged.isClean
            else { return nil }
            let image = ConflictImage(normalizing: merged.content)
            return image.hunks.isEmpty ? nil : image
        }
        let analysis = try ConflictAnalysis(conflict)
        guard !analysis.points.contains(where: \.isWholeDocument), let shown = try analysis.preview([:], label: { _ in "" }) else {
            return nil
        }
        let image = ConflictImage(normalizing: shown, markerSize: analysis.markerSize)
        return image.hunks.isEmpty ? nil : image
    }

    /// A point as its record keeps it: its sorted sides, and the hunk they make, normalized.
    static func hunk(of point: ConflictPoint) -> (hunks: [[Data]], preimage: Data) {
        let sides = point.sortedSides.map { Data($0) }
        var preimage = Data("<<<<<<<\n".utf8)
        for (index, side) in sides.enumerated() {
            if index > 0 { preimage.append(Data("=======\n".utf8)) }
            preimage.append(side)
            if side.last != UInt8(ascii: "\n") { preimage.append(UInt8(ascii: "\n")) }
        }
        preimage.append(Data(">>>>>>>\n".utf8))
        return ([sides], preimage)
    }

    /// The record of an answer a person gave as a whole file; nil when the conflict makes no image.
    static func record(of conflict: ConflictSet, content: Data?, by device: String, at date: Date) throws(TruceError) -> RecordedAnswer? {
        guard let image = try image(of: conflict), let id = image.id else { return nil }
        return RecordedAnswer(
            id: id, scope: .document, path: nil, hunks: image.hunks, preimage: image.text, postimage: content, document: conflict.key,
            recordedBy: device, recordedAt: date)
    }

    /// The records of answers a person gave point by point: what each answer put at its point.
    static func records(of session: ResolutionSession, by device: String, at date: Date) throws(TruceError) -> [RecordedAnswer] {
        var records: [RecordedAnswer] = []
        for point in session.points {
            guard let answer = session.answers[point.id] else { continue }
            let (hunks, preimage) = hunk(of: point)
            records.append(
                RecordedAnswer(
                    id: point.conflictID, scope: .point, path: point.path, hunks: hunks, preimage: preimage,
                    postimage: try session.text(of: answer, at: point.id), document: session.key, recordedBy: device, recordedAt: date))
        }
        return records
    }
}
