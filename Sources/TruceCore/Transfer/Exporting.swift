import Foundation
internal import TruceGit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What an export wrote: how many files, which documents were in conflict, what could not be written.
public struct ExportReport: Sendable, Codable {
    /// Files written, one per document whose (chosen) version holds content.
    public let written: Int
    /// Documents whose version is a deletion: not written.
    public let deleted: Int
    /// Documents that were in conflict (at the date asked, if any): written as their current version.
    public let inConflict: [DocumentKey]
    /// Documents whose file could not be written (a file and a folder of one name, a link in the way), with the reason.
    public let failed: [ImportReport.PathIssue]
}

extension DocumentStore {
    /// Writes the current version of every document into the folder `path` as files, creating folders.
    ///
    /// With `date`, each document's version current at that date instead:
    /// among its versions whose modification (author) date is not after
    /// `date`, those that no other such version descends from are its heads
    /// then, and the current-version rule picks one. Deleted documents (and
    /// documents with no version yet at `date`) are not written. The folder is
    /// created when missing; an existing one must be empty unless
    /// `overwrite`, which replaces files of the same name and leaves the
    /// others. Nothing is ever written through a symbolic link.
    public func exportDocuments(to path: String, versionAt date: Date? = nil, overwrite: Bool = false) throws(TruceError) -> ExportReport {
        try Self.checkExportFolder(path, overwrite: overwrite)
        if Self.isInside(path, self.path) { throw .invalidFolder(path, reason: "it is the store or inside it") }
        let chosen = try withRepository { repository in
            try Self.headReferencesByDocument(in: repository).map { group in
                let key = try Self.key(ofHead: group[0].target, in: repository)
                let targets = group.map(\.target)
                let versions =
                    try date.map { try Self.versions(of: key, at: $0, headTargets: targets, in: repository) }
                    ?? Self.documentVersions(of: key, amongCandidates: targets, in: repository)
                return (key: key, current: versions.current, inConflict: versions.state == .inConflict)
            }.sorted { $0.key < $1.key }
        }
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw .invalidFolder(path, reason: "cannot create it: \(error.localizedDescription)")
        }
        let root: Int32
        do { root = try FileTree.openFolder(path) } catch { throw .invalidFolder(path, reason: error.reason) }
        defer { close(root) }
        var written = 0, deleted = 0
        var failed: [ImportReport.PathIssue] = []
        for document in chosen {
            guard let version = document.current, let content = try contents(of: version) else {
                if document.current != nil { deleted += 1 }
                continue
            }
            do {
                try FileTree.write(content, to: document.key.segments.map { Array($0.utf8) }, below: root)
                written += 1
            } catch {
                failed.append(ImportReport.PathIssue(path: document.key.rawValue, reason: error.reason))
            }
        }
        return ExportReport(written: written, deleted: deleted, inConflict: chosen.filter(\.inConflict).map(\.key), failed: failed)
    }

    /// Refuses a path that is a file, or a folder with anything in it unless `overwrite`.
    private static func checkExportFolder(_ path: String, overwrite: Bool) throws(TruceError) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return }
        guard isDirectory.boolValue else { throw .invalidFolder(path, reason: "it is a file, not a folder") }
        guard let contents = try? FileManager.default.contentsOfDirectory(atPath: path) else {
            throw .invalidFolder(path, reason: "cannot list it")
        }
        if !contents.isEmpty, !overwrite {
            throw .invalidFolder(path, reason: "it is not empty; export writes into a new or empty folder unless told to overwrite (--force)")
        }
    }

    /// True when `path` (which need not exist yet) is `folder` or below it, links resolved.
    static func isInside(_ path: String, _ folder: String) -> Bool {
        func resolved(_ path: String) -> String {
            var existing = URL(fileURLWithPath: path).standardizedFileURL
            var rest: [String] = []
            while !FileManager.default.fileExists(atPath: existing.path), existing.path != "/" {
                rest.insert(existing.lastPathComponent, at: 0)
                existing.deleteLastPathComponent()
            }
            let real =
                realpath(existing.path, nil).map { pointer in
                    defer { free(pointer) }
                    return String(cString: pointer)
                } ?? existing.path
            return ([real == "/" ? "" : real] + rest).joined(separator: "/")
        }
        let inner = resolved(path), outer = resolved(folder)
        return inner == outer || inner.hasPrefix(outer + "/")
    }

    /// A document's versions as they stood at `date`: its heads among the versions made by then, current first.
    ///
    /// A version is a head at `date` when its author date is not after
    /// `date` and no other such version descends from it. One walk, children
    /// before parents, carries "has a descendant made by then" down to the
    /// parents. Heads with identical content count as one, as they do now.
    static func versions(of key: DocumentKey, at date: Date, headTargets: [ObjectID], in repository: Repository) throws -> DocumentVersions {
        var covered = Set<ObjectID>()
        var heads: [Version] = []
        var trees: [VersionID: ObjectID] = [:]
        for id in try repository.walk(from: Array(Set(headTargets))) {
            let commit = try repository.readCommit(id)
            let version = try readVersion(commit, of: key, in: repository)
            let madeByThen = version.modificationDate <= date
            if madeByThen, !covered.contains(id) {
                heads.append(version)
                trees[version.id] = commit.tree
            }
            if madeByThen || covered.contains(id) { covered.formUnion(commit.parents) }
        }
        let (distinct, equivalents) = collapsingIdenticalContent(heads.sorted(by: isMoreCurrent), trees: trees)
        return DocumentVersions(key: key, current: distinct.first, conflicts: Array(distinct.dropFirst()), equivalents: equivalents, base: nil)
    }
}
