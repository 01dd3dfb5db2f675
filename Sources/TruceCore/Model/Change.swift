import Foundation

/// One change to a document: a save, a deletion or a resolution, made here or received by `sync`.
public struct Change: Sendable, Equatable, Codable {
    /// What happened: a save, a deletion, a resolution or a reopening.
    public let kind: Change.Kind
    /// The document it happened to.
    public let key: DocumentKey
    /// The version it wrote (or, for a received version, adopted).
    public let version: VersionID
    /// The device that made the version (the transaction author, in Core Data's words).
    public let author: String
    /// The version's author date.
    public let date: Date
}

extension Change {
    /// What kind of change a journal entry records.
    public enum Kind: String, Sendable, Codable {
        /// A save: a new version with content.
        case save
        /// A deletion version.
        case delete
        /// A resolution: a version that settles a conflict.
        case resolution
        /// A reopening: a resolution turned back into the conflict it settled.
        case reopen
    }
}

extension Change {
    /// The journal entry for a version: a save, a deletion, a resolution or a reopening by its author.
    init(recording version: Version) {
        let kind: Change.Kind = version.isResolution ? .resolution : version.reopened != nil ? .reopen : version.isDeletion ? .delete : .save
        self.init(kind: kind, key: version.key, version: version.id, author: version.deviceName, date: version.modificationDate)
    }
}
