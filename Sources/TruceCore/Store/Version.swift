import Foundation
internal import TruceGit

/// The id of a version: its git commit id.
///
/// A type of its own, not the git layer's object id, so that a version id never mixes with the id of a blob, a tree or a journal
/// entry; it orders, prints and encodes (as the 40-digit hexadecimal string) exactly as its commit id does.
public struct VersionID: Hashable, Comparable, Sendable, CustomStringConvertible, Codable {
    /// The commit's id, for the git layer.
    let objectID: ObjectID

    /// The version whose commit is `objectID`.
    init(_ objectID: ObjectID) {
        self.objectID = objectID
    }

    /// Parses a full 40-character hexadecimal id; nil when it is not one.
    public init?(hex: String) {
        guard let objectID = ObjectID(hex: hex) else { return nil }
        self.objectID = objectID
    }

    /// The 40-character lowercase hexadecimal form that git prints.
    public var hex: String { objectID.hex }

    /// The first seven hexadecimal digits, as `git log --oneline` shows them.
    public var short: String { objectID.short }

    public var description: String { objectID.hex }

    public static func < (lhs: VersionID, rhs: VersionID) -> Bool { lhs.objectID < rhs.objectID }

    public init(from decoder: Decoder) throws {
        objectID = try ObjectID(from: decoder)
    }

    public func encode(to encoder: Encoder) throws {
        try objectID.encode(to: encoder)
    }
}

/// One saved state of a document: a git commit whose tree holds the document at its key.
///
/// Two values are equal (and hash alike) when they are the same version: the
/// same commit of the same document. `isConflict` and `isResolved` say what
/// the call that read the value knew about the document's heads at that
/// moment, so they are data, not identity.
public struct Version: Sendable, Hashable, Identifiable, Codable {
    /// The commit id; `git show <id>:<key>` prints the content.
    public let id: VersionID
    /// The document this version belongs to.
    public let key: DocumentKey
    /// The device (or user) that saved it: the commit's author name.
    public let deviceName: String
    /// When it was saved: the commit's author date.
    public let modificationDate: Date
    /// True for a deletion: the version's tree lacks the key.
    public let isDeletion: Bool
    /// The versions this one was made from; a resolution has the current version first, then every loser.
    public let parents: [VersionID]
    /// For a resolution, the resolver that made it (`Resolved-By:`); nil for a plain save.
    public let resolvedBy: String?
    /// For a reopening, the resolution it undid (`Reopens:`): this version restores one of that resolution's parents.
    public let reopened: VersionID?
    /// True when this is a head other than the current version: an unresolved conflict version.
    public internal(set) var isConflict: Bool
    /// True when a resolution settled this version (it is a loser that a resolution descends from).
    public internal(set) var isResolved: Bool

    /// True when this version settles a conflict.
    public var isResolution: Bool { resolvedBy != nil }

    /// The current-version rule every replica computes alike: true when this version wins over `other` (the later
    /// author date, then the larger id), so among heads the one no other wins over is the current version.
    public func isMoreCurrent(than other: Version) -> Bool {
        if modificationDate != other.modificationDate { return modificationDate > other.modificationDate }
        return id > other.id
    }

    /// A version as a store reads it back, for a resolver tested without a store (TruceTesting builds its conflict sets with it).
    ///
    /// Nothing is checked or written: a store's versions come from its reads,
    /// with `modificationDate` to the second and `deviceName` trimmed.
    public init(
        id: VersionID, key: DocumentKey, deviceName: String, modificationDate: Date, isDeletion: Bool = false,
        parents: [VersionID] = [], resolvedBy: String? = nil, reopened: VersionID? = nil,
        isConflict: Bool = false, isResolved: Bool = false
    ) {
        self.id = id
        self.key = key
        self.deviceName = deviceName
        self.modificationDate = modificationDate
        self.isDeletion = isDeletion
        self.parents = parents
        self.resolvedBy = resolvedBy
        self.reopened = reopened
        self.isConflict = isConflict
        self.isResolved = isResolved
    }

    public static func == (lhs: Version, rhs: Version) -> Bool { lhs.id == rhs.id && lhs.key == rhs.key }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(key)
    }
}

/// Where a document stands, the counterpart of `UIDocument.DocumentState`.
public enum DocumentState: String, Sendable, Codable, CustomStringConvertible {
    /// The store has no version of the document.
    case absent
    /// One head, holding content.
    case settled
    /// One head, a deletion.
    case deleted
    /// Several heads: versions were made concurrently and wait for a resolution.
    case inConflict

    public var description: String {
        switch self {
        case .absent: "absent"
        case .settled: "settled"
        case .deleted: "deleted"
        case .inConflict: "in conflict"
        }
    }
}

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
    public var allHeads: [Version] { (heads + equivalents).sorted(by: DocumentStore.isMoreCurrent) }
}

extension CommitRecord {
    /// This commit as a version: where the git layer hands a commit to the version layer.
    var versionID: VersionID { VersionID(id) }

    /// The parents as versions, in the commit's order.
    var parentVersionIDs: [VersionID] { parents.map(VersionID.init) }
}

extension Repository {
    /// Writes the commit of a new version made from `parents`: the one place a written commit becomes a version.
    func writeVersion(tree: ObjectID, parents: [VersionID], author: Signature, committer: Signature, message: String) throws -> VersionID {
        VersionID(try writeCommit(tree: tree, parents: parents.map(\.objectID), author: author, committer: committer, message: message))
    }
}
