internal import TruceGit

extension DocumentStore {
    /// Every document with at least one version, in key order.
    public func documents() throws(TruceError) -> [DocumentKey] {
        try withRepository { repository in
            try Self.headReferencesByDocument(in: repository).map { try Self.key(ofHead: $0[0].target, in: repository) }.sorted()
        }
    }

    /// The documents in conflict, in key order, with their heads; the cost follows the number of conflicts.
    public func documentsInConflict() throws(TruceError) -> [DocumentVersions] {
        try withRepository { try ConflictIndex.documentsInConflict(in: $0) }
    }

    /// Every head reference of the store, one group per document (each group non-empty); reads every head ref.
    static func headReferencesByDocument(in repository: Repository) throws -> [[(name: String, target: ObjectID)]] {
        var directories: [Substring: [(name: String, target: ObjectID)]] = [:]
        for reference in try repository.references(under: ReferenceLayout.headsRoot) {
            guard let slash = reference.name.lastIndex(of: "/") else { continue }
            directories[reference.name[..<slash], default: []].append(reference)
        }
        return Array(directories.values)
    }

    static func key(ofHead id: ObjectID, in repository: Repository) throws -> DocumentKey {
        guard let key = try documentKey(of: id, in: repository) else {
            throw TruceError.versionOfAnotherDocument(VersionID(id), requested: "unknown", actual: "no document (not a Truce version)")
        }
        return key
    }
}
