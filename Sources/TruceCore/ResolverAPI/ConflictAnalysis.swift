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
        try checkKnown(answers)
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

    /// The text `answer` puts at `point` (nil: a deletion of the whole document), or why it cannot be given there.
    public func text(for answer: HunkAnswer, at point: ConflictPoint) throws(TruceError) -> Data? {
        guard
            let texts = regions.lazy.compactMap({ region -> [Data?]? in
                if case .conflict(let found, let texts) = region, found.id == point.id { texts } else { nil }
            }).first
        else { throw .invalidAnswer("there is no conflict point \(point.id) in \(conflict.key)") }
        return try text(for: answer, at: point, texts: texts)
    }

    /// The document as a person sees it while answering: answered points settled, the others shown between conflict
    /// markers in `style`, each side labelled by `label` (nil: a deletion of the whole document by the answers).
    ///
    /// Markers are longer than any marker-like line the content holds, as
    /// git's `conflict-marker-size` makes them, so they can always be told
    /// apart. Two heads give git's own layout; more heads add one `=======`
    /// line, labelled, before each further head.
    public func preview(
        _ answers: [String: HunkAnswer], style: TextMergeOptions.ConflictStyle = .merge,
        label: (ConflictPoint.Side) -> String = { "\($0.deviceName) \($0.version.short)" }, baseLabel: String = "base"
    ) throws(TruceError) -> Data? {
        try checkKnown(answers)
        let size = markerSize
        var output = Data()
        for region in regions {
            switch region {
            case .unchanged(let text), .settled(let text):
                output.append(text)
            case .conflict(let point, let texts):
                if let answer = answers[point.id] {
                    guard let text = try text(for: answer, at: point, texts: texts) else { return nil }
                    output.append(text)
                } else {
                    output.append(Self.markers(point, texts: texts, style: style, size: size, label: label, baseLabel: baseLabel))
                }
            }
        }
        return output
    }

    /// The length of the markers a preview writes: 7, or one more than the longest marker-like run that begins a line
    /// of any head or of the base.
    var markerSize: Int {
        var longest = 0
        let contents = conflict.heads.compactMap(\.content) + [conflict.base?.content].compactMap { $0 }
        for content in contents {
            for line in Self.lines(of: content) {
                guard let first = line.first, [UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "="), UInt8(ascii: "|")].contains(first)
                else { continue }
                longest = max(longest, line.prefix { $0 == first }.count)
            }
        }
        return max(7, longest >= 7 ? longest + 1 : 7)
    }

    private static func markers(
        _ point: ConflictPoint, texts: [Data?], style: TextMergeOptions.ConflictStyle, size: Int, label: (ConflictPoint.Side) -> String,
        baseLabel: String
    ) -> Data {
        func line(_ character: Character, _ text: String) -> Data {
            Data((String(repeating: character, count: size) + (text.isEmpty ? "" : " " + text) + "\n").utf8)
        }
        func body(_ text: Data?) -> Data {
            guard var text else { return Data() }
            if let last = text.last, last != UInt8(ascii: "\n") { text.append(UInt8(ascii: "\n")) }
            return text
        }
        var sides = texts
        let base = point.base
        var prefix = Data(), suffix = Data()
        if style == .zdiff3, !sides.contains(nil) {
            // zdiff3: lines every head shares at the start and the end stand outside the conflict.
            let split = sides.map { lines(of: $0!) }
            var common = 0
            while split.allSatisfy({ $0.count > common }), Set(split.map { $0[common] }).count == 1 { common += 1 }
            var trailing = 0
            while split.allSatisfy({ $0.count - common > trailing }), Set(split.map { $0[$0.count - 1 - trailing] }).count == 1 { trailing += 1 }
            prefix = split[0].prefix(common).reduce(into: Data()) { $0.append($1) }
            suffix = split[0].suffix(trailing).reduce(into: Data()) { $0.append($1) }
            sides = split.map { $0.dropFirst(common).dropLast(trailing).reduce(into: Data()) { $0.append($1) } }
        }
        var output = prefix
        output += line("<", label(point.sides[0]))
        output += body(sides[0])
        if style != .merge {
            output += line("|", baseLabel)
            output += body(base)
        }
        for index in sides.indices.dropFirst() {
            let isLast = index == sides.count - 1
            output += line("=", sides.count > 2 ? label(point.sides[index]) : "")
            output += body(sides[index])
            if isLast { output += line(">", sides.count > 2 ? "\(sides.count) heads" : label(point.sides[index])) }
        }
        return output + suffix
    }

    private func checkKnown(_ answers: [String: HunkAnswer]) throws(TruceError) {
        let known = Set(points.map(\.id))
        if let unknown = answers.keys.sorted().first(where: { !known.contains($0) }) {
            throw .invalidAnswer("there is no conflict point \(unknown) in \(conflict.key); points: \(points.map(\.id).joined(separator: ", "))")
        }
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
        case .both, .bothReversed:
            if point.isWholeDocument, texts.contains(nil) || texts.contains(where: { $0.map(TextMerge.isBinary) == true }) {
                throw .invalidAnswer("\(point.id)=\(answer): the heads cannot be joined (a deletion or binary content); choose one version")
            }
            var seen: [Data] = []
            for case let text? in answer == .both ? texts : texts.reversed() where !seen.contains(text) { seen.append(text) }
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
        // Offsets found with memchr over the raw bytes: subscripting `Data` byte by byte pays an exclusivity check per byte.
        var ends: [Int] = []
        data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            guard let base = bytes.baseAddress else { return }
            var offset = 0
            while offset < bytes.count, let found = memchr(base + offset, Int32(UInt8(ascii: "\n")), bytes.count - offset) {
                offset = base.distance(to: UnsafeRawPointer(found)) + 1
                ends.append(offset)
            }
        }
        var lines: [Data] = []
        lines.reserveCapacity(ends.count + 1)
        var start = data.startIndex
        for end in ends {
            lines.append(data[start..<data.startIndex + end])
            start = data.startIndex + end
        }
        if start < data.endIndex { lines.append(data[start...]) }
        return lines
    }

    private static func join(_ lines: ArraySlice<Data>) -> Data {
        lines.reduce(into: Data()) { $0.append($1) }
    }
}
