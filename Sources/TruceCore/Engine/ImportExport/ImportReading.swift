import Foundation
internal import TruceGit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reading what an import saves: the files of a folder (one at a time, below it, never through a link) or a stream's records.
enum ImportReading {
    /// An import saves this many documents at most in one batch: its memory follows the batch, not the source
    /// (a batch's heads, journal entry and version index cost about a kilobyte and a half a document).
    static let documentsPerBatch = 131_072

    /// The entries of `source` in key order.
    static func inKeyOrder(_ source: ImportSource) -> [ImportSource.Entry] {
        source.entries.sorted { $0.key < $1.key }
    }

    /// The bytes of every entry of `entries` that can be read, in their order; the others are refused by path.
    /// `progress` hears (entries read, entries in all) counted from `offset`, of `total`.
    static func read(
        _ entries: ArraySlice<ImportSource.Entry>, of source: ImportSource, refusing refused: inout [ImportReport.PathIssue],
        progress: (@Sendable (Int, Int) -> Void)?, total: Int
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
        contents.reserveCapacity(entries.count)
        for (index, entry) in zip(entries.indices, entries) {
            if index % 256 == 0 { progress?(index, total) }
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
        progress?(entries.endIndex, total)
        return contents
    }
}

extension ReadSession {
    /// True when `key`'s current version holds exactly `content` (compared by blob id, without reading the blob).
    func currentVersion(of key: DocumentKey, holds content: Data) throws -> Bool {
        guard let current = try versions(of: key).current, !current.isDeletion else { return false }
        let tree = try repository.readCommit(current.id.objectID).tree
        guard let entry = try repository.entry(at: key.rawValue, inTree: tree), !entry.isTree else { return false }
        return entry.id == ObjectID.blobHash(of: content)
    }
}
