import Foundation
internal import TruceGit

/// A view of the store at one moment, for one call: every read goes through one.
///
/// A session lists a document's heads once and keeps what it read for its
/// life, so a call that asks about one document several times (its
/// versions, then its contents, then its routing) reads its head
/// references and runs the current-version rule once. Sessions are short:
/// one public call, under the store's lock.
///
/// There are two kinds, told apart by `overlay`. A session of a store whose
/// save log holds saves git does not have yet reads through the log's
/// overlay: those documents' heads come from the log, their objects from
/// the overlay's memory, everything else from git. Otherwise it reads git
/// alone. Either way a session writes nothing, which is why a store that can
/// only be read reads as well as any (`ReadOnlyStoreTests`).
final class ReadSession {
    /// The engine reads go through: the store's, or the overlay's, whose handle also sees the log's objects.
    let engine: StoreEngine
    /// The saves the save log holds and git does not, when there are any.
    let overlay: SaveLogOverlay?
    private var versionsRead: [DocumentKey: DocumentVersions] = [:]
    private var listings: [DocumentKey: HeadListing] = [:]

    init(engine: StoreEngine, overlay: SaveLogOverlay? = nil) {
        self.engine = engine
        self.overlay = overlay
    }

    var repository: Repository { engine.repository }

    /// `key`'s current version, conflict versions and base, read once per session.
    func versions(of key: DocumentKey) throws -> DocumentVersions {
        try listedVersions(of: key).versions
    }

    /// `versions(of:)` with the listing of git's head references it was read from: what a writer publishes against.
    /// No listing when the session reads through the save log's overlay (a logged save publishes when it lands).
    func listedVersions(of key: DocumentKey) throws -> (versions: DocumentVersions, listing: HeadListing?) {
        if let known = versionsRead[key] { return (known, listings[key]) }
        if let overlay {
            let versions = try overlay.versions(of: key)
            versionsRead[key] = versions
            return (versions, nil)
        }
        let listing = try engine.headListing(of: key)
        let versions = try engine.documentVersions(of: key, amongCandidates: listing.references.map(\.target))
        (versionsRead[key], listings[key]) = (versions, listing)
        return (versions, listing)
    }

    // MARK: - Documents and their versions

    /// The version of `key` whose id is `id` or starts with it (at least 4 hexadecimal digits).
    func version(_ id: String, of key: DocumentKey) throws -> Version {
        try engine.readVersion(engine.resolveVersionID(id), of: key)
    }

    /// The bytes of `version`, nil when it is a deletion.
    func contents(of version: Version) throws -> Data? { try engine.contents(of: version) }

    /// The bytes of `key`'s current version, nil when it is deleted; throws when it is absent.
    func contents(of key: DocumentKey) throws -> Data? {
        guard let current = try versions(of: key).current else { throw TruceError.documentNotFound(key) }
        return try contents(of: current)
    }

    /// Every document with at least one version, in key order: git's, and those the save log holds first saves of.
    func documents() throws -> [DocumentKey] {
        var keys = Set(try engine.headReferencesByDocument().map { try engine.key(ofHead: $0[0].target) })
        keys.formUnion(overlay?.pendingKeys ?? [])
        return keys.sorted()
    }

    /// The documents in conflict, in key order, with their heads; the cost follows the number of conflicts.
    func documentsInConflict() throws -> [DocumentVersions] {
        try markedDocuments().filter { $0.state == .inConflict }
    }

    /// The documents marked as having several heads (in conflict, or with equal-content heads), as they are now, in
    /// key order; the save log's documents are read whatever their markers say.
    func markedDocuments() throws -> [DocumentVersions] {
        var keys = Set(try engine.markedKeys())
        keys.formUnion(overlay?.pendingKeys ?? [])
        return try keys.sorted().map { try versions(of: $0) }.filter { $0.allHeads.count > 1 }
    }

    /// Every version of the document its heads reach, newest first, with `isConflict` and `isResolved` set.
    func history(of key: DocumentKey) throws -> [Version] {
        let current = try versions(of: key)
        guard !current.heads.isEmpty else { throw TruceError.documentNotFound(key) }
        let conflictIDs = Set(current.conflicts.map(\.id))
        var versions = try repository.walk(from: current.heads.map(\.id.objectID)).map {
            try engine.readVersion(VersionID($0), of: key)
        }
        let resolvedIDs = Set(versions.filter(\.isResolution).flatMap { $0.parents.dropFirst() })
        for index in versions.indices {
            versions[index].isConflict = conflictIDs.contains(versions[index].id)
            versions[index].isResolved = resolvedIDs.contains(versions[index].id)
        }
        return versions
    }

    /// Why `key`'s current version is current, and the `merge` attribute `git check-attr` gives its key.
    func explain(_ key: DocumentKey) throws -> Explanation {
        let versions = try versions(of: key)
        guard let current = versions.current else { throw TruceError.documentNotFound(key) }
        var explanation = Explanation(
            versions: versions,
            currentReason: Explanation.reason(current: current, heads: versions.heads) + Explanation.equivalence(versions),
            mergeAttribute: try repository.attribute("merge", for: key.rawValue).description
        )
        let now = Date()
        explanation.datedAhead = versions.heads.filter { HybridDates.isFarAhead($0.modificationDate, of: now) }
        return explanation
    }

    /// The newest author date among the versions this store adopted by sync; nil when it adopted none it knows of.
    func newestAdoptedDate() -> Date? { NewestAdoptedDate.read(in: repository) }
}
