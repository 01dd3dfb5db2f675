import Foundation
internal import TruceGit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reading what an import saves: the files of a folder (one at a time, below it, never through a link) or a stream's records.
enum ImportReading {
    /// The bytes of every entry that can be read, in key order; the others are refused by path.
    static func read(
        _ source: ImportSource, refusing refused: inout [ImportReport.PathIssue],
        progress: (@Sendable (Int, Int) -> Void)?
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
}

extension StoreEngine {
    /// True when `key`'s current version holds exactly `content` (compared by blob id, without reading the blob).
    func currentVersion(of key: DocumentKey, holds content: Data) throws -> Bool {
        guard let current = try documentVersions(of: key).current, !current.isDeletion else { return false }
        let tree = try repository.readCommit(current.id.objectID).tree
        guard let entry = try repository.entry(at: key.rawValue, inTree: tree), !entry.isTree else { return false }
        return entry.id == ObjectID.blobHash(of: content)
    }
}
