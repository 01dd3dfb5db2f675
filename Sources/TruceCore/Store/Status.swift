extension DocumentStore {
    /// Every document with at least one version, in key order.
    public func documents() throws(TruceError) -> [DocumentKey] {
        try withRepository { repository in
            try Self.headDirectories(in: repository).map { try Self.key(ofHead: $0.value[0], in: repository) }.sorted()
        }
    }

    /// The documents in conflict, in key order, with their heads.
    public func documentsInConflict() throws(TruceError) -> [DocumentVersions] {
        try withRepository { repository in
            // A document with one head reference cannot be in conflict: only directories with several are read.
            try Self.headDirectories(in: repository).values.filter { $0.count > 1 }.compactMap { targets in
                let versions = try Self.documentVersions(of: Self.key(ofHead: targets[0], in: repository), in: repository)
                return versions.state == .inConflict ? versions : nil
            }.sorted { $0.key < $1.key }
        }
    }

    /// Head reference targets grouped by document directory.
    private static func headDirectories(in repository: Repository) throws -> [Substring: [ObjectID]] {
        var directories: [Substring: [ObjectID]] = [:]
        for reference in try repository.references(matching: ReferenceLayout.allHeads) {
            guard let slash = reference.name.lastIndex(of: "/") else { continue }
            directories[reference.name[..<slash], default: []].append(reference.target)
        }
        return directories
    }

    private static func key(ofHead id: ObjectID, in repository: Repository) throws -> DocumentKey {
        guard let message = VersionMessage(parsing: try repository.readCommit(id).message) else {
            throw TruceError.versionOfAnotherDocument(id, requested: "unknown", actual: "no document (not a Truce version)")
        }
        return try DocumentKey(message.key)
    }
}
