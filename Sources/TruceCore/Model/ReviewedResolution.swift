import Foundation

/// One automatic resolution as `review` lists it: who made it, what it recorded it kept and dropped, and what was
/// brought back since.
public struct ReviewedResolution: Sendable, Encodable {
    /// The resolution version (``Version/resolvedBy`` names the resolver; its parents are the heads it settled).
    public let resolution: Version
    /// The device that ran it here, as this store's change journal recorded it; for one a sync brought, which records
    /// no device (replicas agree on the commit, not on who ran it), the resolver's name.
    public let author: String
    /// What it kept and dropped, per place, as its commit records them: empty for a resolution that dropped
    /// nothing (a clean three-way merge) or made by a release that did not record decisions.
    public let decisions: [ResolutionDecision]
    /// Decisions the commit only counts: past the size a commit message lists.
    public let unlistedDecisions: Int
    /// Why the commit's decisions could not be read (another replica wrote them malformed, or naming versions the
    /// resolution does not settle); nil when they were read. Nothing of them is then listed, or restorable.
    public let problem: String?
    /// Every value `decisions` drop, each with the version that restored it, if one did.
    public let droppedValues: [DroppedValue]

    /// The document.
    public var key: DocumentKey { resolution.key }
    /// The resolver that made it.
    public var resolver: String { resolution.resolvedBy ?? "" }

    init(resolution: Version, author: String, section: DecisionsSection.Reading) {
        self.resolution = resolution
        self.author = author
        var decisions: [ResolutionDecision] = []
        var unlisted = 0
        var problem: String?
        switch section {
        case .none:
            break
        case .malformed(let reason):
            problem = "its decisions cannot be read: \(reason)"
        case .section(let section):
            // Only the heads it settled can have been dropped or kept: anything else came from a replica that lies.
            let settled = Set(resolution.parents)
            let named = section.decisions.flatMap { [$0.kept].compactMap { $0 } + $0.dropped }.map(\.version)
            if let stranger = named.first(where: { !settled.contains($0) }) {
                problem = "its decisions name version \(stranger.short), which it does not settle"
            } else {
                (decisions, unlisted) = (section.decisions, section.unlistedDecisions)
            }
        }
        self.decisions = decisions
        self.unlistedDecisions = unlisted
        self.problem = problem
        droppedValues = decisions.flatMap { decision in
            decision.dropped.map {
                DroppedValue(
                    key: resolution.key, resolution: resolution.id, point: decision.point, rule: decision.rule, kept: decision.kept, value: $0)
            }
        }
    }

    private init(_ other: ReviewedResolution, droppedValues: [DroppedValue]) {
        (resolution, author, decisions) = (other.resolution, other.author, other.decisions)
        (unlistedDecisions, problem, self.droppedValues) = (other.unlistedDecisions, other.problem, droppedValues)
    }

    /// This resolution with the value `restore` names marked as brought back by `version`.
    func marking(_ restore: RestoredDrop, by version: VersionID) -> ReviewedResolution {
        let point = restore.point.map { Array($0.utf8) }
        return ReviewedResolution(
            self,
            droppedValues: droppedValues.map { dropped in
                dropped.point.map { Array($0.utf8) } == point && dropped.value.version == restore.version ? dropped.restored(by: version) : dropped
            })
    }

    enum CodingKeys: String, CodingKey {
        case document, resolution, resolver, date, author, decisions, unlistedDecisions, problem, droppedValues
    }

    /// The resolution's id, document, resolver and date beside what it recorded.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(key, forKey: .document)
        try container.encode(resolution.id, forKey: .resolution)
        try container.encode(resolver, forKey: .resolver)
        try container.encode(resolution.modificationDate, forKey: .date)
        try container.encode(author, forKey: .author)
        try container.encode(decisions, forKey: .decisions)
        try container.encode(unlistedDecisions, forKey: .unlistedDecisions)
        try container.encodeIfPresent(problem, forKey: .problem)
        try container.encode(droppedValues, forKey: .droppedValues)
    }
}
