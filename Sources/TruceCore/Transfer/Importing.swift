import Foundation
internal import TruceGit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

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
    public let versions: [ImportReport.ImportedVersion]
}

extension DocumentStore {
    /// Saves every entry of `source` as a document, in one batch as `saveBatch` writes it, skipping those already current.
    ///
    /// Each document's new version is based on its current version; a
    /// document whose current version holds the same bytes gets none, so
    /// importing a folder again after edits writes versions only for the
    /// files that changed. A file that cannot be read now (it vanished, became
    /// a link, or is unreadable) is refused and the rest are imported.
    /// `progress` is called with (files read, files in all) while reading.
    public func importDocuments(
        from source: ImportSource, device: String? = nil, date: Date = Date(),
        progress: ((Int, Int) -> Void)? = nil
    ) throws(TruceError) -> ImportReport {
        let author = try author(device)
        var refused = source.refused
        let contents = try Self.read(source, refusing: &refused, progress: progress)
        let changed = try withRepository { repository in
            try contents.filter { key, content in try !Self.currentVersion(of: key, holds: content, in: repository) }
        }
        let ids = try saveBatch(changed.map { BatchSave(key: $0.key, content: $0.content, device: author, date: date) })
        let versions = zip(changed, ids).map { ImportReport.ImportedVersion(key: $0.0.key, version: $0.1) }
        return ImportReport(
            documents: contents.count, newVersions: changed.count, unchanged: contents.count - changed.count,
            refused: refused, skipped: source.skipped, versions: versions.sorted { $0.key < $1.key })
    }

    /// The bytes of every entry that can be read, in key order; the others are refused by path.
    private static func read(
        _ source: ImportSource, refusing refused: inout [ImportReport.PathIssue],
        progress: ((Int, Int) -> Void)?
    ) throws(TruceError) -> [(key: DocumentKey, content: Data)] {
        var root: Int32 = -1
        if let folder = source.folder {
            do {
                root = try FileTree.openFolder(folder)
            } catch {
                throw .invalidFolder(folder, reason: error.reason)
            }
        }
        defer { if root >= 0 { close(root) } }
        var contents: [(key: DocumentKey, content: Data)] = []
        for (index, entry) in source.entries.enumerated() {
            if index % 256 == 0 { progress?(index, source.entries.count) }
            switch entry.content {
            case .bytes(let data):
                contents.append((entry.key, data))
            case .file(let components):
                do {
                    contents.append((entry.key, try FileTree.read(components, below: root)))
                } catch {
                    refused.append(ImportReport.PathIssue(path: entry.path, reason: "cannot read it: \(error.reason)"))
                }
            }
        }
        progress?(source.entries.count, source.entries.count)
        return contents.sorted { $0.key < $1.key }
    }

    /// True when `key`'s current version holds exactly `content` (compared by blob id, without reading the blob).
    private static func currentVersion(of key: DocumentKey, holds content: Data, in repository: Repository) throws -> Bool {
        guard let current = try documentVersions(of: key, in: repository).current, !current.isDeletion else { return false }
        let tree = try repository.readCommit(current.id.objectID).tree
        guard let entry = try repository.entry(at: key.rawValue, inTree: tree), !entry.isTree else { return false }
        return entry.id == ObjectID.blobHash(of: content)
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
