import Foundation
internal import TruceGit

extension DocumentStore {
    /// The current version, the conflict versions and their base, read at one moment.
    public func versions(of key: DocumentKey) throws(TruceError) -> DocumentVersions {
        try withRepository { try Self.documentVersions(of: key, in: $0) }
    }

    /// Whether the document is absent, settled, deleted or in conflict.
    public func state(of key: DocumentKey) throws(TruceError) -> DocumentState {
        try versions(of: key).state
    }

    /// The head chosen by the deterministic rule (latest author date, then larger id); nil when absent.
    public func currentVersion(of key: DocumentKey) throws(TruceError) -> Version? {
        try versions(of: key).current
    }

    /// The heads other than the current one, newest first.
    public func unresolvedConflictVersions(of key: DocumentKey) throws(TruceError) -> [Version] {
        try versions(of: key).conflicts
    }

    /// The document's head references as stored, including heads another head descends from.
    static func headReferences(of key: DocumentKey, in repository: Repository) throws -> [(name: String, target: ObjectID)] {
        try repository.references(under: ReferenceLayout.headsDirectory(of: key))
    }

    static func documentVersions(of key: DocumentKey, in repository: Repository) throws -> DocumentVersions {
        try documentVersions(of: key, amongCandidates: headReferences(of: key, in: repository).map(\.target), in: repository)
    }

    /// The versions `key` would have if `candidates` were its head references: how events replay the states a change went through.
    static func documentVersions(of key: DocumentKey, amongCandidates candidates: [ObjectID], in repository: Repository) throws -> DocumentVersions {
        let heads = try independentHeads(Array(Set(candidates)), in: repository)
        var trees: [VersionID: ObjectID] = [:]
        var versions = try heads.map { id in
            let commit = try repository.readCommit(id)
            trees[commit.versionID] = commit.tree
            return try readVersion(commit, of: key, in: repository)
        }
        versions.sort(by: isMoreCurrent)
        guard !versions.isEmpty else { return DocumentVersions(key: key, current: nil, conflicts: [], equivalents: [], base: nil) }
        let (distinct, equivalents) = collapsingIdenticalContent(versions, trees: trees)
        let base = try baseVersion(of: distinct.map(\.id), key: key, in: repository)
        return DocumentVersions(key: key, current: distinct[0], conflicts: Array(distinct.dropFirst()), equivalents: equivalents, base: base)
    }

    /// Heads in current-version order split into those of distinct content (conflicts marked after the first) and the rest:
    /// heads holding the same content count as one, and the most current of them stands for the others.
    static func collapsingIdenticalContent(_ sorted: [Version], trees: [VersionID: ObjectID]) -> (distinct: [Version], equivalents: [Version]) {
        var distinct: [Version] = []
        var equivalents: [Version] = []
        var seen = Set<ObjectID>()
        for version in sorted {
            if seen.insert(trees[version.id]!).inserted { distinct.append(version) } else { equivalents.append(version) }
        }
        for index in distinct.indices.dropFirst() { distinct[index].isConflict = true }
        return (distinct, equivalents)
    }

    /// The deterministic current-version rule every replica computes alike: latest author date, then the larger id.
    static func isMoreCurrent(_ lhs: Version, _ rhs: Version) -> Bool { lhs.isMoreCurrent(than: rhs) }

    /// Drops every candidate that another candidate descends from: those are no longer heads.
    static func independentHeads(_ candidates: [ObjectID], in repository: Repository) throws -> [ObjectID] {
        guard candidates.count > 1 else { return candidates }
        return try candidates.filter { candidate in
            try !candidates.contains { other in try other != candidate && repository.isDescendant(other, of: candidate) }
        }
    }

    /// Reads a version and checks that it belongs to `key`; the commit must exist.
    static func readVersion(_ id: VersionID, of key: DocumentKey, in repository: Repository) throws -> Version {
        // A missing commit here is a damaged store, not bad input: callers check ids users give them first.
        try readVersion(repository.readCommit(id.objectID), of: key, in: repository)
    }

    /// The version a commit already read records; fails when it is not a version of `key`.
    static func readVersion(_ commit: CommitRecord, of key: DocumentKey, in repository: Repository) throws -> Version {
        let id = commit.versionID
        guard let message = VersionMessage(parsing: commit.message) else {
            throw TruceError.versionOfAnotherDocument(id, requested: key, actual: "no document (not a Truce version)")
        }
        guard key.hasBytes(of: message.key) else {
            throw TruceError.versionOfAnotherDocument(id, requested: key, actual: message.key)
        }
        return version(of: commit, message: message, key: key, isDeletion: try repository.entry(at: key.rawValue, inTree: commit.tree) == nil)
    }

    /// The version a commit records, once its message is parsed and its tree looked into.
    static func version(of commit: CommitRecord, message: VersionMessage, key: DocumentKey, isDeletion: Bool) -> Version {
        Version(
            id: commit.versionID, key: key, deviceName: commit.author.name,
            modificationDate: Date(timeIntervalSince1970: TimeInterval(commit.author.time)),
            isDeletion: isDeletion, parents: commit.parentVersionIDs, resolvedBy: message.resolvedBy, reopened: message.reopens,
            isConflict: false, isResolved: false
        )
    }
}
