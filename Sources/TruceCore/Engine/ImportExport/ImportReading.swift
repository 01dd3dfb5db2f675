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

    /// The bytes of the entries of `source` at `positions` that can be read, in their order; the others are refused
    /// by path. `progress` hears (entries read, entries in all) counted from `offset`, of `total`. A stream's records
    /// are read as `StreamRecords.contents(at:progress:total:)` reads them.
    static func read(
        _ positions: ArraySlice<Int>, of source: ImportSource, refusing refused: inout [ImportReport.PathIssue],
        progress: (@Sendable (Int, Int) -> Void)?, total: Int
    ) throws(TruceError) -> [(key: DocumentKey, content: Data)] {
        if let records = source.records {
            defer { progress?(positions.endIndex, total) }
            let offset = positions.startIndex
            let counted: (@Sendable (Int, Int) -> Void)? = progress.map { progress in { @Sendable done, all in progress(offset + done, all) } }
            return records.contents(at: positions, progress: counted, total: total)
        }
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
        contents.reserveCapacity(positions.count)
        for (index, position) in zip(positions.indices, positions) {
            if index % 256 == 0 { progress?(index, total) }
            let entry = source.entry(at: position)
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
        progress?(positions.endIndex, total)
        return contents
    }
}

extension ReadSession {
    /// The entries of `contents` whose document's current version does not hold exactly their bytes (compared by blob
    /// id, without reading the blob): what an import saves.
    ///
    /// The heads of all of them are read together, one listing of the loose heads and one look at `packed-refs` (a
    /// store with no heads yet reads none): a listing per document was a third of an import's time. Through the save
    /// log's overlay each document is read on its own, as every read there is.
    func entriesNotHeld(_ contents: [(key: DocumentKey, content: Data)]) throws -> [(key: DocumentKey, content: Data)] {
        guard overlay == nil else { return try contents.filter { try !currentVersion(of: $0.key, holds: $0.content) } }
        guard try repository.mayHaveReferences(under: ReferenceLayout.headsRoot) else { return contents }
        let heads = try engine.headReferences(ofEach: contents.map(\.key))
        return try zip(contents, heads).filter { entry, heads in
            guard !heads.isEmpty else { return true }
            let versions = try engine.documentVersions(of: entry.key, amongCandidates: heads.map(\.target))
            return try !holds(versions, entry.content, at: entry.key)
        }.map(\.0)
    }

    /// True when `key`'s current version holds exactly `content` (compared by blob id, without reading the blob).
    func currentVersion(of key: DocumentKey, holds content: Data) throws -> Bool {
        try holds(versions(of: key), content, at: key)
    }

    private func holds(_ versions: DocumentVersions, _ content: Data, at key: DocumentKey) throws -> Bool {
        guard let current = versions.current, !current.isDeletion else { return false }
        let tree = try repository.readCommit(current.id.objectID).tree
        guard let entry = try repository.entry(at: key.rawValue, inTree: tree), !entry.isTree else { return false }
        return entry.id == ObjectID.blobHash(of: content)
    }
}
