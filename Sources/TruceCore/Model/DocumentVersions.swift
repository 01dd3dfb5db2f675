import Foundation

/// A document's heads at one moment: the current version, the conflict versions and their base.
public struct DocumentVersions: Sendable, Codable {
    /// The document.
    public let key: DocumentKey
    /// The head chosen by the deterministic rule; nil when the document is absent.
    public let current: Version?
    /// The other heads whose content differs from the current version's and from each other's, newest first.
    public let conflicts: [Version]
    /// Heads whose content is identical to the current version's or to a conflict version's: they count as one
    /// with it, and the next save or resolution supersedes them too.
    public let equivalents: [Version]
    /// The nearest common ancestor of the heads; nil unless in conflict with related histories.
    public let base: Version?

    /// Absent, deleted, settled or in conflict, from the heads.
    public var state: DocumentState {
        guard let current else { return .absent }
        if !conflicts.isEmpty { return .inConflict }
        return current.isDeletion ? .deleted : .settled
    }

    /// Every head with distinct content, current first.
    public var heads: [Version] { (current.map { [$0] } ?? []) + conflicts }

    /// Every head, equivalents included, in the order of the current-version rule: the parents a resolution records.
    public var allHeads: [Version] { (heads + equivalents).sorted { $0.isMoreCurrent(than: $1) } }
}
