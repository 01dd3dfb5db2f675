import Foundation

/// Reading a store: a document's versions, state, history and bytes, and the documents it holds.
extension DocumentStore {
    /// The current version, the conflict versions and their base, read at one moment.
    public func versions(of key: DocumentKey) throws(TruceError) -> DocumentVersions {
        try access.read { try $0.versions(of: key) }
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

    /// Every version of the document reachable from its heads, newest first, resolutions included.
    ///
    /// The counterpart of `NSFileVersion.otherVersionsOfItem(at:)`.
    public func history(of key: DocumentKey) throws(TruceError) -> [Version] {
        try access.read { try $0.history(of: key) }
    }

    /// The version of `key` whose id is `id` or starts with it (at least 4 hexadecimal digits).
    public func version(_ id: String, of key: DocumentKey) throws(TruceError) -> Version {
        try access.read { try $0.version(id, of: key) }
    }

    /// The bytes of `version`, nil when it is a deletion.
    public func contents(of version: Version) throws(TruceError) -> Data? {
        try access.read { try $0.contents(of: version) }
    }

    /// The bytes of the version a save wrote, nil when it is a deletion.
    public func contents(of saved: SaveResult) throws(TruceError) -> Data? {
        try contents(of: saved.version)
    }

    /// The bytes of the current version, nil when the document is deleted; throws when it is absent.
    public func contents(of key: DocumentKey) throws(TruceError) -> Data? {
        try access.read { try $0.contents(of: key) }
    }

    /// Every document with at least one version, in key order.
    public func documents() throws(TruceError) -> [DocumentKey] {
        try access.read { try $0.documents() }
    }

    /// The documents in conflict, in key order, with their heads; the cost follows the number of conflicts.
    public func documentsInConflict() throws(TruceError) -> [DocumentVersions] {
        try access.read { try $0.documentsInConflict() }
    }

    /// Explains the current-version rule for `key` and reads the attribute that picks its resolver.
    public func explain(_ key: DocumentKey) throws(TruceError) -> Explanation {
        try access.read { try $0.explain(key) }
    }
}
