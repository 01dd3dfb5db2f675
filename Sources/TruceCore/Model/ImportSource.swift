import Foundation

/// The documents an import will save: a folder's regular files, or the records of a stream, each with its key.
///
/// Making a source reads names only; the folder's files are read by
/// `DocumentStore.importDocuments(_:)`, so a file that vanishes or
/// changes kind in between is refused then, by name.
public struct ImportSource: Sendable {
    /// One document to save: its key, the path it came from, and where its bytes are.
    public struct Entry: Sendable {
        /// The document the file becomes.
        public let key: DocumentKey
        /// The file's path below the folder, or the stream's path, as one line.
        public let path: String
        let content: Content
    }

    enum Content: Sendable {
        /// A file below `folder`, by name components.
        case file([[UInt8]])
        case bytes(Data)
    }

    /// The folder the files are below; nil for a stream.
    public let folder: String?
    /// The files or records to import: a folder's in key order, a stream's in the order each path first came.
    ///
    /// A stream's entries are made when asked for: the source holds its records as places in its bytes.
    public var entries: [Entry] { records.map { records in records.records.indices.map(records.entry(at:)) } ?? listed }
    /// A folder's entries.
    var listed: [Entry] = []
    /// A stream's records.
    var records: StreamRecords?
    /// Paths that cannot become documents (links, special files, names that are not valid keys), with the reason.
    public internal(set) var refused: [ImportReport.PathIssue] = []
    /// Paths left out on purpose (a `.git` folder, the store itself), with the reason.
    public internal(set) var skipped: [ImportReport.PathIssue] = []

    init(folder: String?) { self.folder = folder }

    /// Every regular file below `path`, keyed by its path relative to it (`/`-separated) after `prefix`.
    ///
    /// Symbolic links inside the folder are refused, never followed; a `.git`
    /// entry is skipped, and so is the store when it lies inside the folder
    /// (`excluding`). Throws `invalidFolder` when `path` is not a folder or is inside that store, or an invalid key error for a bad `prefix`.
    public static func folder(at path: String, prefix: String = "", excluding store: String? = nil) throws(TruceError) -> ImportSource {
        let keyPrefix = try validated(prefix)
        if let store, FileTree.isInside(path, store) { throw .invalidFolder(path, reason: "it is the store or inside it") }
        let root: Int32
        do {
            root = try FileTree.openFolder(path)
        } catch {
            throw .invalidFolder(
                path, reason: error.code == ENOTDIR ? "it is not a folder" : error.code == ENOENT ? "it does not exist" : error.reason)
        }
        defer { close(root) }
        let storeIdentity = store.flatMap(FileTree.identity)
        var source = ImportSource(folder: path)
        let listed = FileTree.walk(root) { entry in
            entry.components.last != Array(".git".utf8) && !(storeIdentity.map { $0 == (entry.device, entry.inode) } ?? false)
        }
        for entry in listed {
            let shown = FileTree.display(entry.components)
            switch entry.kind {
            case .directory where entry.components.last == Array(".git".utf8):
                source.skipped.append(ImportReport.PathIssue(path: shown, reason: "a git folder; its files are git's, not documents"))
            case .directory where storeIdentity.map({ $0 == (entry.device, entry.inode) }) ?? false:
                source.skipped.append(ImportReport.PathIssue(path: shown, reason: "it is the store itself"))
            case .directory:
                continue
            case .file:
                source.add(entry.components, shown: shown, prefix: keyPrefix)
            case .symbolicLink:
                source.refused.append(ImportReport.PathIssue(path: shown, reason: "it is a symbolic link (not followed)"))
            case .special(let what):
                source.refused.append(ImportReport.PathIssue(path: shown, reason: "it is \(what), not a regular file"))
            case .unreadable(let reason):
                source.refused.append(ImportReport.PathIssue(path: shown, reason: "cannot read this folder: \(reason)"))
            }
        }
        return source
    }

    /// Adds the file at `components` under the key its path makes, or refuses it by name.
    private mutating func add(_ components: [[UInt8]], shown: String, prefix: String) {
        if components.last == Array(".git".utf8) {
            skipped.append(ImportReport.PathIssue(path: shown, reason: "a git file (a worktree's or submodule's link), not a document"))
            return
        }
        guard let key = Self.key(for: Array(components.joined(separator: [0x2F])), prefix: prefix, shown: shown, refusing: &refused) else { return }
        listed.append(Entry(key: key, path: shown, content: .file(components)))
    }

    /// How many documents the source holds.
    var documentCount: Int { records?.records.count ?? listed.count }

    /// The positions of the source's documents in key order.
    func positionsInKeyOrder() -> [Int] {
        records?.keyOrder ?? listed.indices.sorted { listed[$0].key < listed[$1].key }
    }

    /// The document at `position` (of `positionsInKeyOrder()`).
    func entry(at position: Int) -> Entry {
        records?.entry(at: position) ?? listed[position]
    }

    /// The key for a path's bytes after `prefix`, or nil with the refusal recorded.
    static func key(
        for bytes: [UInt8], prefix: String, shown: @autoclosure () -> String, refusing refused: inout [ImportReport.PathIssue]
    ) -> DocumentKey? {
        guard let name = String(validating: bytes, as: UTF8.self) else {
            refused.append(ImportReport.PathIssue(path: shown(), reason: "its name is not valid UTF-8, so it cannot be a document key"))
            return nil
        }
        do {
            return try DocumentKey(prefix + name)
        } catch {
            guard case .invalidKey(_, let reason) = error else { return nil }
            refused.append(ImportReport.PathIssue(path: shown(), reason: "its name is not a valid document key: \(reason)"))
            return nil
        }
    }

    /// `prefix` as it goes before every key: empty, or a valid key followed by one `/`.
    static func validated(_ prefix: String) throws(TruceError) -> String {
        guard !prefix.isEmpty else { return "" }
        let folder = prefix.hasSuffix("/") ? String(prefix.dropLast()) : prefix
        _ = try DocumentKey(folder)
        return folder + "/"
    }
}
