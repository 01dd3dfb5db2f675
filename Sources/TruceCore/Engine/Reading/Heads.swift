import Foundation
internal import TruceGit

/// Reading a document's heads: its head references, the versions they name, and the current-version rule among them.
/// One listing of a document's head references, with what a writer needs of it: which are loose files, the lock files
/// beside them, and the stamp of the `packed-refs` file read.
struct HeadListing {
    let key: DocumentKey
    let references: [(name: String, target: ObjectID)]
    let looseNames: Set<String>
    let lockFiles: [String]
    let packedStamp: FileStamp?
}

extension StoreEngine {
    /// The document's head references as stored, including heads another head descends from.
    func headReferences(of key: DocumentKey) throws -> [(name: String, target: ObjectID)] {
        try headListing(of: key).references
    }

    /// One listing of the document's head references (counted: a save lists its document's heads once).
    func headListing(of key: DocumentKey) throws -> HeadListing {
        instrumentation.countDocumentHeadListing()
        let directory = ReferenceLayout.headsDirectory(of: key)
        let listing = try repository.listing(underEach: [directory], listingLooseUnder: directory)
        return HeadListing(
            key: key, references: listing.references[0], looseNames: listing.looseNames, lockFiles: listing.lockFiles,
            packedStamp: listing.packedStamp)
    }

    /// `headReferences(of:)` of each of `keys`, in their order, read together: one listing of the loose heads and one
    /// reading of `packed-refs` for all of them.
    func headReferences(ofEach keys: [DocumentKey]) throws -> [[(name: String, target: ObjectID)]] {
        try repository.references(underEach: keys.map(ReferenceLayout.headsDirectory(of:)), listingLooseUnder: ReferenceLayout.headsRoot)
    }

    func documentVersions(of key: DocumentKey) throws -> DocumentVersions {
        try documentVersions(of: key, amongCandidates: headReferences(of: key).map(\.target))
    }

    /// The versions `key` would have if `candidates` were its head references: how events replay the states a change went through.
    func documentVersions(of key: DocumentKey, amongCandidates candidates: [ObjectID]) throws -> DocumentVersions {
        let heads = try independentHeads(Array(Set(candidates)))
        var trees: [VersionID: ObjectID] = [:]
        let versions = try heads.map { id in
            let commit = try repository.readCommit(id)
            trees[commit.versionID] = commit.tree
            return try readVersion(commit, of: key)
        }
        return try documentVersions(of: key, heads: versions, trees: trees)
    }

    /// The versions of `key` whose heads are `heads`, none descending from another, with the tree each holds: the
    /// current-version rule among them, identical content collapsed, and their base.
    func documentVersions(of key: DocumentKey, heads: [Version], trees: [VersionID: ObjectID]) throws -> DocumentVersions {
        var versions = heads.map { head in
            var head = head
            (head.isConflict, head.isResolved) = (false, false)
            return head
        }
        versions.sort { $0.isMoreCurrent(than: $1) }
        guard !versions.isEmpty else { return DocumentVersions(key: key, current: nil, conflicts: [], equivalents: [], base: nil) }
        let (distinct, equivalents) = Self.collapsingIdenticalContent(versions, trees: trees)
        let base = try baseVersion(of: distinct.map(\.id), key: key)
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

    /// Drops every candidate that another candidate descends from: those are no longer heads.
    func independentHeads(_ candidates: [ObjectID]) throws -> [ObjectID] {
        guard candidates.count > 1 else { return candidates }
        return try candidates.filter { candidate in
            try !candidates.contains { other in try other != candidate && repository.isDescendant(other, of: candidate) }
        }
    }

    /// Reads a version and checks that it belongs to `key`; the commit must exist.
    func readVersion(_ id: VersionID, of key: DocumentKey) throws -> Version {
        // A missing commit here is a damaged store, not bad input: callers check ids users give them first.
        try readVersion(repository.readCommit(id.objectID), of: key)
    }

    /// The version a commit already read records; fails when it is not a version of `key`.
    func readVersion(_ commit: CommitRecord, of key: DocumentKey) throws -> Version {
        let id = commit.versionID
        guard let message = VersionMessage(parsing: commit.message) else {
            throw TruceError.versionOfAnotherDocument(id, requested: key, actual: "no document (not a Truce version)")
        }
        guard key.hasBytes(of: message.key) else {
            throw TruceError.versionOfAnotherDocument(id, requested: key, actual: message.key)
        }
        return Self.version(of: commit, message: message, key: key, isDeletion: try repository.entry(at: key.rawValue, inTree: commit.tree) == nil)
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
