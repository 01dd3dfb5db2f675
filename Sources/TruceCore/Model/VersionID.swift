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

extension CommitRecord {
    /// This commit as a version: where the git layer hands a commit to the version layer.
    var versionID: VersionID { VersionID(id) }

    /// The parents as versions, in the commit's order.
    var parentVersionIDs: [VersionID] { parents.map(VersionID.init) }
}
