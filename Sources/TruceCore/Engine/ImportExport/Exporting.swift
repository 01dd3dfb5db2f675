import Foundation
internal import TruceGit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension StoreEngine {
    /// Each document and the version an export writes of it: its current version, or the one current at `date`.
    func exportChoices(versionAt date: Date?) throws -> [(key: DocumentKey, current: Version?, inConflict: Bool)] {
        // Truce's own records (parked sessions, recorded answers) are no document of the app's to write out.
        try headReferencesByDocument().compactMap { group -> (key: DocumentKey, current: Version?, inConflict: Bool)? in
            let key = try key(ofHead: group[0].target)
            guard !key.isTruceRecord else { return nil }
            let targets = group.map(\.target)
            let chosen = try date.map { try versions(of: key, at: $0, headTargets: targets) } ?? documentVersions(of: key, amongCandidates: targets)
            return (key: key, current: chosen.current, inConflict: chosen.state == .inConflict)
        }.sorted { $0.key < $1.key }
    }

    /// A document's versions as they stood at `date`: its heads among the versions made by then, current first.
    ///
    /// A version is a head at `date` when its author date is not after
    /// `date` and no other such version descends from it. One walk, children
    /// before parents, carries "has a descendant made by then" down to the
    /// parents. Heads with identical content count as one, as they do now.
    func versions(of key: DocumentKey, at date: Date, headTargets: [ObjectID]) throws -> DocumentVersions {
        var covered = Set<ObjectID>()
        var heads: [Version] = []
        var trees: [VersionID: ObjectID] = [:]
        for id in try repository.walk(from: Array(Set(headTargets))) {
            let commit = try repository.readCommit(id)
            let version = try readVersion(commit, of: key)
            let madeByThen = version.modificationDate <= date
            if madeByThen, !covered.contains(id) {
                heads.append(version)
                trees[version.id] = commit.tree
            }
            if madeByThen || covered.contains(id) { covered.formUnion(commit.parents) }
        }
        let (distinct, equivalents) = Self.collapsingIdenticalContent(heads.sorted { $0.isMoreCurrent(than: $1) }, trees: trees)
        return DocumentVersions(key: key, current: distinct.first, conflicts: Array(distinct.dropFirst()), equivalents: equivalents, base: nil)
    }
}

extension FileTree {
    /// Refuses a path that is a file, or a folder with anything in it unless `overwrite`.
    static func checkExportFolder(_ path: String, overwrite: Bool) throws(TruceError) {
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
}
