extension DocumentStore {
    /// Every version of the document reachable from its heads, newest first, resolutions included.
    ///
    /// The counterpart of `NSFileVersion.otherVersionsOfItem(at:)`.
    public func history(of key: DocumentKey) throws(TruceError) -> [Version] {
        try withRepository { repository in
            let current = try Self.documentVersions(of: key, in: repository)
            guard !current.heads.isEmpty else { throw TruceError.documentNotFound(key) }
            let conflictIDs = Set(current.conflicts.map(\.id))
            var versions = try repository.walk(from: current.heads.map(\.id.objectID)).map {
                try Self.readVersion(VersionID($0), of: key, in: repository)
            }
            let resolvedIDs = Set(versions.filter(\.isResolution).flatMap { $0.parents.dropFirst() })
            for index in versions.indices {
                versions[index].isConflict = conflictIDs.contains(versions[index].id)
                versions[index].isResolved = resolvedIDs.contains(versions[index].id)
            }
            return versions
        }
    }
}
