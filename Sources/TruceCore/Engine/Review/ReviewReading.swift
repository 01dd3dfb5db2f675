import Foundation
internal import TruceGit

/// Reading what automatic resolutions dropped, and what a restore needs: both from the commits themselves.
extension StoreEngine {
    /// The automatic resolutions the journal records after `position` up to `tip` (of `key` only, by `resolver`
    /// only, when given), with the restores among the later saves marked; nil when `position` is not below `tip`.
    ///
    /// Walks the journal as `changes(since:)` does, so the cost follows the
    /// changes since the token: one commit read per resolution, and one per
    /// save or deletion of a document that has a resolution listed.
    func review(key: DocumentKey?, resolver: String?, from tip: ObjectID, after position: ObjectID?) throws -> [ReviewedResolution]? {
        guard let changes = try ChangeJournal(repository: repository).changes(from: tip, after: position) else { return nil }
        var reviewed: [ReviewedResolution] = []
        var listed: [VersionID: Int] = [:]
        var reviewedKeys = Set<DocumentKey>()
        for change in changes where key == nil || change.key == key {
            switch change.kind {
            case .resolution:
                // A version pruned since (a reopened resolution, say) is simply gone.
                guard listed[change.version] == nil, try repository.containsCommit(change.version.objectID) else { continue }
                let commit = try repository.readCommit(change.version.objectID)
                let version = try readVersion(commit, of: change.key)
                guard let by = version.resolvedBy, by != ResolverNames.person,
                    resolver.map({ $0.utf8.elementsEqual(by.utf8) }) ?? true
                else { continue }
                listed[version.id] = reviewed.count
                reviewedKeys.insert(change.key)
                reviewed.append(ReviewedResolution(resolution: version, author: change.author, section: DecisionsSection.reading(commit.message)))
            case .save, .delete:
                guard reviewedKeys.contains(change.key), try repository.containsCommit(change.version.objectID),
                    let restore = VersionMessage(parsing: try repository.readCommit(change.version.objectID).message)?.restoresDropped,
                    let index = listed[restore.resolution], reviewed[index].key == change.key
                else { continue }
                reviewed[index] = reviewed[index].marking(restore, by: change.version)
            case .reopen:
                continue
            }
        }
        return reviewed
    }
}

extension ReadSession {
    /// What restoring `dropped` starts from, checked against the resolution's own commit (never the value handed
    /// in): the decision, the dropped head and the current version, each with its content.
    func restoreInputs(_ dropped: DroppedValue) throws -> (
        resolution: ConflictSet.Side, decision: ResolutionDecision, dropped: ConflictSet.Side, current: ConflictSet.Side
    ) {
        let key = dropped.key
        guard try repository.containsCommit(dropped.resolution.objectID) else { throw TruceError.versionNotFound(dropped.resolution.hex) }
        let commit = try repository.readCommit(dropped.resolution.objectID)
        let resolution = try engine.readVersion(commit, of: key)
        func refuse(_ reason: String) -> TruceError { .nothingToRestore(key, reason: reason) }
        guard resolution.isResolution else { throw refuse("version \(resolution.id.short) is not a resolution") }
        let reviewed = ReviewedResolution(resolution: resolution, author: "", section: DecisionsSection.reading(commit.message))
        if let problem = reviewed.problem { throw refuse("resolution \(resolution.id.short): \(problem)") }
        let point = dropped.point.map { Array($0.utf8) }
        guard
            let decision = reviewed.decisions.first(where: { decision in
                decision.point.map { Array($0.utf8) } == point && decision.dropped.contains { $0.version == dropped.value.version }
            })
        else {
            let place = dropped.point.map { "at \(TruceError.quoted($0))" } ?? "of the whole document"
            throw refuse("resolution \(resolution.id.short) dropped no value of version \(dropped.value.version.short) \(place)")
        }
        let droppedVersion = try engine.readVersion(dropped.value.version, of: key)
        guard let current = try versions(of: key).current else { throw TruceError.documentNotFound(key) }
        return (
            ConflictSet.Side(version: resolution, content: try contents(of: resolution)), decision,
            ConflictSet.Side(version: droppedVersion, content: try contents(of: droppedVersion)),
            ConflictSet.Side(version: current, content: try contents(of: current))
        )
    }
}
