import Foundation

/// A person settling one document's conflict point by point: answers, undo and redo, a preview at any moment, and a
/// commit that writes exactly the resolution the same answers through `resolve(_:answering:)` write.
///
/// A value an app's UI keeps as its state: every change is a `mutating`
/// method, nothing touches the store until `DocumentStore.commit(_:)` or
/// `DocumentStore.park(_:)`. Get one with
/// `DocumentStore.resolutionSession(for:)`, which resumes the answers of a
/// session parked on this device or another, matched to the points by
/// content.
///
///     var session = try await store.resolutionSession(for: "notes/todo.md")
///     for point in session.points { print(point.id, session.label(of: point.sides[0])) }
///     try session.answer("H1", with: .theirs)
///     try session.take(session.heads[0].id)          // every other point from the current version
///     session.undo()                                  // H1 is open again
///     let preview = try await session.preview()       // open points between conflict markers
///     if session.isComplete { try await store.commit(session) } else { try store.park(session) }
public struct ResolutionSession: Sendable {
    /// The document in conflict.
    public let key: DocumentKey
    /// The heads the person decides between, current first: what `ours`, `theirs` and a version answer name.
    public let heads: [Version]
    /// Their merge base; nil when their histories are unrelated.
    public let base: Version?
    /// The points to decide: line hunks, or places in a structured document (JSON Pointer paths).
    public let points: [ConflictPoint]
    /// The answers given so far, by point id.
    public private(set) var answers: [String: HunkAnswer]
    /// When the session continues a parked one: who parked it, when, and what of it still applies.
    public let resumption: Resumption?
    /// The answers recalled from what people answered before to the same points (`RecordedAnswer`), by point id:
    /// given already, and shown with who recorded them and when.
    public let recalled: [String: RecordedAnswer]

    /// What became of a parked session's answers when it was continued.
    public struct Resumption: Sendable, Equatable {
        /// The device that parked it.
        public let parkedBy: String
        /// When it was parked.
        public let parkedAt: Date
        /// True when the document's heads are no longer the ones the session was parked with: new versions arrived.
        public let newVersionsArrived: Bool
        /// Answers kept, their points still there (matched by content, not by number).
        public let kept: Int
        /// Answers dropped, their points gone (the new versions changed what they disagree about).
        public let dropped: Int
    }

    /// The conflict the answers settle: under modify-wins, the edited heads only.
    let conflict: ConflictSet
    /// How the answers become a document: the line hunks of `analysis`, or the chain's point-answering resolver.
    let chain: ResolverChain
    let analysis: ConflictAnalysis?
    private var undone: [[String: HunkAnswer]] = []
    private var redone: [[String: HunkAnswer]] = []

    init(
        key: DocumentKey, conflict: ConflictSet, base: Version?, points: [ConflictPoint], chain: ResolverChain,
        analysis: ConflictAnalysis?, answers: [String: HunkAnswer] = [:], resumption: Resumption? = nil,
        recalled: [String: RecordedAnswer] = [:]
    ) {
        self.key = key
        self.conflict = conflict
        heads = conflict.heads.map(\.version)
        self.base = base
        self.points = points
        self.chain = chain
        self.analysis = analysis
        self.answers = answers
        self.resumption = resumption
        self.recalled = recalled
    }

    /// Points still without an answer.
    public var remaining: Int { points.count - points.filter { answers[$0.id] != nil }.count }
    /// True once every point has an answer: the session can be committed.
    public var isComplete: Bool { remaining == 0 }
    /// The first point without an answer, in the document's order; nil when complete.
    public var nextUnanswered: ConflictPoint? { points.first { answers[$0.id] == nil } }
    /// The first point without an answer after `pointID`, wrapping around; nil when complete.
    public func nextUnanswered(after pointID: String) -> ConflictPoint? {
        guard let index = points.firstIndex(where: { $0.id == pointID }) else { return nextUnanswered }
        return (points[(index + 1)...] + points[...index]).first { answers[$0.id] == nil }
    }
    /// True when `undo()` has something to take back; `canRedo` likewise for `redo()`.
    public var canUndo: Bool { !undone.isEmpty }
    public var canRedo: Bool { !redone.isEmpty }

    /// The point called `id` (`H1`…), or at that JSON Pointer path.
    public func point(_ id: String) -> ConflictPoint? {
        points.first { $0.id == id } ?? points.first { $0.path.map { Array($0.utf8) == Array(id.utf8) } == true }
    }

    /// The version a side of a point belongs to, with its device and date.
    public func version(of side: ConflictPoint.Side) -> Version? {
        heads.first { $0.id == side.version }
    }

    /// A side's label for people: device, date and short version id, and whether it is the current version.
    public func label(of side: ConflictPoint.Side) -> String {
        let date = version(of: side).map { ISO8601.format($0.modificationDate) }.map { " " + $0 } ?? ""
        return "\(side.deviceName)\(date) \(side.version.short)\(side.isCurrent ? " (current)" : "")"
    }

    /// The base's label for people.
    public var baseLabel: String {
        guard let base else { return "base (none: the histories are unrelated)" }
        return "base \(ISO8601.format(base.modificationDate)) \(base.id.short)"
    }

    /// Answers the point `pointID` (an id, or a JSON Pointer path), replacing any earlier answer; undoable.
    ///
    /// An answer that cannot apply at the point is refused here, with the
    /// reason: `theirs` among three heads or more, `both` at a path, a version
    /// id that is no head or base, `base` without a base.
    public mutating func answer(_ pointID: String, with answer: HunkAnswer) throws(TruceError) {
        guard let point = point(pointID) else {
            throw .invalidAnswer("there is no conflict point \(pointID) in \(key); points: \(points.map(\.id).joined(separator: ", "))")
        }
        try check(answer, at: point)
        record { $0[point.id] = answer }
    }

    /// Takes the point back to no answer; undoable.
    public mutating func clearAnswer(_ pointID: String) {
        guard let point = point(pointID), answers[point.id] != nil else { return }
        record { $0[point.id] = nil }
    }

    /// Answers every open point (or, with `replacing`, every point) with `version`'s side; one undoable step.
    public mutating func take(_ version: VersionID, replacing: Bool = false) throws(TruceError) {
        let answer = HunkAnswer.version(version.hex)
        let chosen = points.filter { replacing || answers[$0.id] == nil }
        for point in chosen { try check(answer, at: point) }
        guard !chosen.isEmpty else { return }
        record { answers in for point in chosen { answers[point.id] = answer } }
    }

    /// Takes back the last change of answers; false when there was none.
    @discardableResult
    public mutating func undo() -> Bool {
        guard let previous = undone.popLast() else { return false }
        redone.append(answers)
        answers = previous
        return true
    }

    /// Gives back the last change `undo()` took back; false when there was none.
    @discardableResult
    public mutating func redo() -> Bool {
        guard let next = redone.popLast() else { return false }
        undone.append(answers)
        answers = next
        return true
    }

    /// The text an answer puts at a point, for showing before answering; nil for "no value" or a deletion.
    public func text(of answer: HunkAnswer, at pointID: String) throws(TruceError) -> Data? {
        guard let point = point(pointID) else { throw .invalidAnswer("there is no conflict point \(pointID) in \(key)") }
        try check(answer, at: point)
        if let analysis { return try analysis.text(for: answer, at: point) }
        switch answer {
        case .ours: return point.sides[0].text
        case .theirs: return point.sides.count == 2 ? point.sides[1].text : nil
        case .base: return point.base
        case .version(let prefix):
            if let side = point.sides.first(where: { $0.version.hex.hasPrefix(prefix) }) { return side.text }
            return point.base
        case .text(let text): return text
        case .both, .bothReversed: return nil
        }
    }

    /// The whole document as the answers make it, open points between conflict markers in `style`; nil: the answers
    /// delete the document.
    ///
    /// In a structured document the resolver draws the markers around the
    /// open members when it can (JSON with two heads); where it cannot, an
    /// open point shows the current version's value.
    public func preview(style: TextMergeOptions.ConflictStyle = .merge) async throws(TruceError) -> Data? {
        if let analysis {
            return try analysis.preview(answers, style: style, label: label(of:), baseLabel: baseLabel)
        }
        let markers = PreviewMarkers(
            style: style,
            labels: heads.map { version in
                "\(version.deviceName) \(ISO8601.format(version.modificationDate)) \(version.id.short)"
                    + (version.id == heads[0].id ? " (current)" : "")
            }, baseLabel: baseLabel)
        let (answers, conflict, chain) = (self.answers, self.conflict, self.chain)
        if !isComplete,
            let drawn = try await BlockingExecutor.preferring({ () async throws(TruceError) in
                try await chain.preview(answers, of: conflict, markers: markers)
            })
        {
            return drawn
        }
        var shown = answers
        for point in points where shown[point.id] == nil { shown[point.id] = .ours }
        return try await BlockingExecutor.preferring { () async throws(TruceError) in try await chain.applying(shown, to: conflict) }
    }

    /// Records the answers before `change` for undo, applies it, and forgets what was undone.
    private mutating func record(_ change: (inout [String: HunkAnswer]) -> Void) {
        var next = answers
        change(&next)
        guard next != answers else { return }
        undone.append(answers)
        redone.removeAll()
        answers = next
    }

    private func check(_ answer: HunkAnswer, at point: ConflictPoint) throws(TruceError) {
        if let analysis {
            _ = try analysis.text(for: answer, at: point)
            return
        }
        switch answer {
        case .theirs where point.sides.count > 2:
            throw .invalidAnswer("\(point.id)=theirs is ambiguous with \(point.sides.count - 1) conflict versions; name a version id")
        case .both, .bothReversed:
            throw .invalidAnswer("\(point.id)=\(answer): a value at a path cannot hold both sides; choose one version or give your own value")
        case .version(let prefix):
            guard heads.contains(where: { $0.id.hex.hasPrefix(prefix) }) || base?.id.hex.hasPrefix(prefix) == true else {
                throw .invalidAnswer("\(point.id)=\(prefix): no head or base of \(key) has that id")
            }
        default:
            break
        }
    }
}
