import Foundation
internal import TruceGit

/// The N-way comparison of a conflict set against its base: where heads agree, where one head's change
/// can be taken as it is, and the conflict points where a person must choose.
///
/// Each head is diffed against the base (git's own diff, no context lines);
/// changed base regions that overlap or touch, across heads, form one region,
/// as git's merge treats adjacent changes as one conflict. A region where at
/// most one distinct change was made is settled; a region with two or more
/// different changes is a conflict point.
public struct ConflictAnalysis: Sendable {
    enum Region: Sendable {
        /// Lines every head keeps from the base.
        case unchanged(Data)
        /// A region where the heads made at most one distinct change.
        case settled(Data)
        /// A point to decide, with each head's text in `heads` order (nil for a deletion).
        case conflict(ConflictPoint, texts: [Data?])
    }

    private let regions: [Region]
    private let conflict: ConflictSet
    /// The conflict points, in base order.
    public let points: [ConflictPoint]

    /// Compares the heads of `conflict` line by line; binary content or a deletion makes one whole-document point.
    ///
    /// So do heads whose line changes do not overlap: they still differ (equal heads count as one), and when
    /// this analysis is asked for, no resolver settled them, so a person has one point to decide, never zero.
    public init(_ conflict: ConflictSet, algorithm: TextMergeOptions.DiffAlgorithm = .myers) throws(TruceError) {
        self.conflict = conflict
        let heads = conflict.heads
        let contents = heads.compactMap(\.content)
        let isBinary = (contents + [conflict.base?.content].compactMap { $0 }).contains(where: TextMerge.isBinary)
        if contents.count < heads.count || isBinary {
            let point = Self.wholeDocumentPoint(conflict)
            regions = [.conflict(point, texts: heads.map(\.content))]
            points = [point]
            return
        }
        let base = conflict.base?.content ?? Data()
        let lineRegions: [Region]
        do {
            lineRegions = try Self.regions(base: base, hasBase: conflict.base != nil, heads: heads, contents: contents, algorithm: algorithm)
        } catch {
            throw .storeFailure(error)
        }
        let linePoints = lineRegions.compactMap { if case .conflict(let point, _) = $0 { point } else { nil } }
        if linePoints.isEmpty {
            let point = Self.wholeDocumentPoint(conflict)
            (regions, points) = ([.conflict(point, texts: heads.map(\.content))], [point])
        } else {
            (regions, points) = (lineRegions, linePoints)
        }
    }

    /// The document with every conflict point answered (nil: answered with a deletion).
    ///
    /// Throws when an answer is missing, names an unknown point or is ambiguous.
    public func applying(_ answers: [String: HunkAnswer]) throws(TruceError) -> Data? {
        let known = Set(points.map(\.id))
        if let unknown = answers.keys.sorted().first(where: { !known.contains($0) }) {
            throw .invalidAnswer("there is no conflict point \(unknown) in \(conflict.key); points: \(points.map(\.id).joined(separator: ", "))")
        }
        var output = Data()
        for region in regions {
            switch region {
            case .unchanged(let text), .settled(let text):
                output.append(text)
            case .conflict(let point, let texts):
                guard let answer = answers[point.id] else { throw .invalidAnswer("conflict point \(point.id) has no answer") }
                guard let text = try text(for: answer, at: point, texts: texts) else { return nil }
                output.append(text)
            }
        }
        return output
    }

    private func text(for answer: HunkAnswer, at point: ConflictPoint, texts: [Data?]) throws(TruceError) -> Data? {
        switch answer {
        case .ours:
            return texts[0]
        case .theirs:
            guard texts.count == 2 else {
                throw .invalidAnswer("\(point.id)=theirs is ambiguous with \(texts.count - 1) conflict versions; name a version id")
            }
            return texts[1]
        case .base:
            guard let base = conflict.base else { throw .invalidAnswer("\(point.id)=base: these heads have no common base") }
            return point.isWholeDocument ? base.content : point.base
        case .both:
            if point.isWholeDocument, texts.contains(nil) || texts.contains(where: { $0.map(TextMerge.isBinary) == true }) {
                throw .invalidAnswer("\(point.id)=both: the heads cannot be joined (a deletion or binary content); choose one version")
            }
            var seen: [Data] = []
            for case let text? in texts where !seen.contains(text) { seen.append(text) }
            return seen.reduce(into: Data()) { $0.append($1) }
        case .version(let prefix):
            if let index = conflict.heads.firstIndex(where: { $0.version.id.hex.hasPrefix(prefix) }) { return texts[index] }
            if let base = conflict.base, base.version.id.hex.hasPrefix(prefix) { return point.isWholeDocument ? base.content : point.base }
            throw .invalidAnswer("\(point.id)=\(prefix): no head or base of \(conflict.key) has that id")
        case .text(let replacement):
            return replacement
        }
    }

    // MARK: - Building the regions

    private static func regions(base: Data, hasBase: Bool, heads: [ConflictSet.Side], contents: [Data], algorithm: TextMergeOptions.DiffAlgorithm)
        throws(GitError)
        -> [Region]
    {
        let baseLines = lines(of: base)
        let headLines = contents.map(lines(of:))
        var tagged: [(head: Int, hunk: LineDiffHunk)] = []
        for (index, content) in contents.enumerated() {
            tagged += try LineDiff.hunks(from: base, to: content, algorithm: algorithm.lineDiff).map { (index, $0) }
        }
        tagged.sort { ($0.hunk.oldStart, $0.hunk.oldStart + $0.hunk.oldCount) < ($1.hunk.oldStart, $1.hunk.oldStart + $1.hunk.oldCount) }

        // Sweep the base: hunks that overlap or touch belong to one region.
        var clusters: [(start: Int, end: Int, hunks: [(head: Int, hunk: LineDiffHunk)])] = []
        for item in tagged {
            let end = item.hunk.oldStart + item.hunk.oldCount
            if var last = clusters.last, item.hunk.oldStart <= last.end {
                last.end = max(last.end, end)
                last.hunks.append(item)
                clusters[clusters.count - 1] = last
            } else {
                clusters.append((item.hunk.oldStart, end, [item]))
            }
        }

        var regions: [Region] = []
        var position = 0
        var delta = [Int](repeating: 0, count: contents.count)
        var pointNumber = 0
        for cluster in clusters {
            if cluster.start > position { regions.append(.unchanged(join(baseLines[position..<cluster.start]))) }
            let baseText = join(baseLines[cluster.start..<cluster.end])
            var texts: [Data] = []
            var ranges: [ConflictPoint.LineRange] = []
            for head in contents.indices {
                let change = cluster.hunks.filter { $0.head == head }.reduce(0) { $0 + $1.hunk.newCount - $1.hunk.oldCount }
                let start = cluster.start + delta[head]
                let end = cluster.end + delta[head] + change
                texts.append(join(headLines[head][start..<end]))
                ranges.append(ConflictPoint.LineRange(start: start + 1, count: end - start))
                delta[head] += change
            }
            var variants: [Data] = []
            for text in texts where text != baseText && !variants.contains(text) { variants.append(text) }
            if variants.count <= 1 {
                regions.append(.settled(variants.first ?? baseText))
            } else {
                pointNumber += 1
                let point = ConflictPoint(
                    id: "H\(pointNumber)",
                    baseLines: ConflictPoint.LineRange(start: cluster.start + 1, count: cluster.end - cluster.start),
                    base: hasBase ? baseText : nil,
                    sides: heads.indices.map { index in
                        ConflictPoint.Side(
                            version: heads[index].version.id, deviceName: heads[index].version.deviceName,
                            isCurrent: index == 0, lines: ranges[index], text: texts[index])
                    }
                )
                regions.append(.conflict(point, texts: texts))
            }
            position = cluster.end
        }
        if position < baseLines.count { regions.append(.unchanged(join(baseLines[position...]))) }
        return regions
    }

    private static func wholeDocumentPoint(_ conflict: ConflictSet) -> ConflictPoint {
        ConflictPoint(
            id: "H1", baseLines: nil, base: conflict.base?.content,
            sides: conflict.heads.enumerated().map { index, side in
                ConflictPoint.Side(
                    version: side.version.id, deviceName: side.version.deviceName, isCurrent: index == 0,
                    lines: nil, text: side.content)
            }
        )
    }

    /// Splits `data` after each newline; a last line without one is a line too.
    static func lines(of data: Data) -> [Data] {
        var lines: [Data] = []
        var start = data.startIndex
        for index in data.indices where data[index] == UInt8(ascii: "\n") {
            lines.append(data[start...index])
            start = index + 1
        }
        if start < data.endIndex { lines.append(data[start...]) }
        return lines
    }

    private static func join(_ lines: ArraySlice<Data>) -> Data {
        lines.reduce(into: Data()) { $0.append($1) }
    }
}
