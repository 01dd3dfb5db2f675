import Foundation
internal import TruceGit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension ReadSession {
    /// Each document and the version an export writes of it: its current version, or the one current at `date`.
    func exportChoices(versionAt date: Date?) throws -> [(key: DocumentKey, current: Version?, inConflict: Bool)] {
        let pending = Set(overlay?.pendingKeys ?? [])
        var groups: [DocumentKey: [ObjectID]] = [:]
        for group in try engine.headReferencesByDocument() { groups[try engine.key(ofHead: group[0].target)] = group.map(\.target) }
        // A document the save log holds saves of is read as the log has it, git's heads and the log's together.
        for key in pending { groups[key] = try versions(of: key).allHeads.map(\.id.objectID) }
        // Truce's own records (parked sessions, recorded answers) are no document of the app's to write out.
        return try groups.filter { !$0.key.isTruceRecord }.map { key, targets in
            let chosen =
                try date.map { try engine.versions(of: key, at: $0, headTargets: targets) }
                ?? (pending.contains(key) ? versions(of: key) : engine.documentVersions(of: key, amongCandidates: targets))
            return (key: key, current: chosen.current, inConflict: chosen.state == .inConflict)
        }.sorted { $0.key < $1.key }
    }
}

extension StoreEngine {
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
