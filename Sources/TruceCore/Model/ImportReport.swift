import Foundation

/// What an import did: how many documents it saw, how many got a new version, and what it refused or skipped.
public struct ImportReport: Sendable, Codable {
    /// Documents read: `newVersions + unchanged`.
    public let documents: Int
    /// Documents whose bytes differed from their current version (or that were new, or deleted): each got one version.
    public let newVersions: Int
    /// Documents whose current version already holds exactly these bytes: no version written.
    public let unchanged: Int
    /// Paths not imported because of what they are or what they are named; the CLI exits 2 when there is any.
    public let refused: [ImportReport.PathIssue]
    /// Paths left out on purpose (a `.git` folder, the store itself).
    public let skipped: [ImportReport.PathIssue]
    /// The new version of each changed document, in key order.
    ///
    /// Made from a compact list each time it is read (an import of a
    /// million documents would otherwise hold a million entries to its end):
    /// keep it in a local to read it more than once.
    public var versions: [ImportReport.ImportedVersion] { (0..<imported.count).map(imported.entry(at:)) }
    let imported: KeyedVersions

    init(documents: Int, unchanged: Int, refused: [PathIssue], skipped: [PathIssue], imported: KeyedVersions) {
        (self.documents, self.newVersions, self.unchanged) = (documents, imported.count, unchanged)
        (self.refused, self.skipped, self.imported) = (refused, skipped, imported)
    }

    /// The compact list is written and read as `versions` (`KeyedVersions` encodes as those entries).
    private enum CodingKeys: String, CodingKey {
        case documents, newVersions, unchanged, refused, skipped
        case imported = "versions"
    }
}

extension ImportReport {
    /// A document an import wrote a version of.
    public struct ImportedVersion: Sendable, Codable, Equatable {
        /// The document.
        public let key: DocumentKey
        /// Its new version.
        public let version: VersionID
    }
}

extension ImportReport {
    /// A path that an import or export did not take, and why: one line each for the user.
    public struct PathIssue: Sendable, Codable, Equatable, CustomStringConvertible {
        /// The path as one line: UTF-8 as is, other bytes and control characters as `\xNN`.
        public let path: String
        /// Why, in words.
        public let reason: String

        package init(path: String, reason: String) {
            self.path = path
            self.reason = reason
        }

        public var description: String { "'\(path)': \(reason)" }
    }
}
