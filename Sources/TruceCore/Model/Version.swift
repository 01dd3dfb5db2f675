import Foundation

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
