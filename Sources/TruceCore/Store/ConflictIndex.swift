internal import TruceGit

/// The documents with several heads, kept as one marker ref each: `refs/truce/conflicts/<aa>/<bbbb…>` (the key's
/// hash), pointing at one of the document's heads.
///
/// Several heads are a conflict unless they hold identical content; those are
/// marked too, so that `resolve --all` finds them and collapses them into one.
///
/// `status` reads these markers instead of every head ref of the store, so its
/// cost follows the number of conflicts, not the number of documents. Markers
/// are only a hint: every write that may change a document's state updates its
/// marker and then checks the state again until both agree, for a few rounds
/// (so a concurrent writer cannot leave it wrong), `status` re-checks each
/// marked document, and prune rebuilds the whole index.
enum ConflictIndex {
    static let root = "refs/truce/conflicts/"

    static func marker(of key: DocumentKey) -> String {
        let directory = ReferenceLayout.headsDirectory(of: key)
        return root + directory.dropFirst(ReferenceLayout.headsRoot.count).dropLast()
    }

    /// Makes `key`'s marker match its state: present while in conflict, absent otherwise.
    ///
    /// Returns the document's heads as last read, which callers reuse instead of reading them again.
    @discardableResult
    static func update(_ key: DocumentKey, in repository: Repository) throws -> DocumentVersions {
        let name = marker(of: key)
        var versions = try DocumentStore.documentVersions(of: key, in: repository)
        for _ in 0..<8 {
            let marked = try repository.reference(name)
            let hasSeveralHeads = versions.allHeads.count > 1
            if hasSeveralHeads, marked == nil, let current = versions.current {
                try DocumentStore.withLockRetries(on: name, in: repository) {
                    do {
                        try repository.updateReference(
                            name, to: current.id.objectID, expecting: nil, message: "truce: \(key.rawValue) is in conflict")
                    } catch let error as GitError where error.isConcurrentModification {
                        return  // another writer marked it
                    }
                }
                versions = try DocumentStore.documentVersions(of: key, in: repository)
            } else if !hasSeveralHeads, let marked {
                try DocumentStore.withLockRetries(on: name, in: repository) {
                    do {
                        try repository.deleteReference(name, expecting: marked)
                    } catch let error as GitError where error.isConcurrentModification {
                        return
                    }
                }
                versions = try DocumentStore.documentVersions(of: key, in: repository)
            } else {
                break  // marker and state agree
            }
        }
        return versions
    }

    /// The documents whose marker is set and that are still in conflict, in key order.
    static func documentsInConflict(in repository: Repository) throws -> [DocumentVersions] {
        try markedDocuments(in: repository).filter { $0.state == .inConflict }
    }

    /// The marked documents as they are now, in key order: in conflict, or with equal-content heads.
    static func markedDocuments(in repository: Repository) throws -> [DocumentVersions] {
        try repository.references(under: root).compactMap { marker in
            guard let key = try DocumentStore.documentKey(of: marker.target, in: repository) else { return nil }
            let versions = try DocumentStore.documentVersions(of: key, in: repository)
            return versions.allHeads.count > 1 ? versions : nil
        }.sorted { $0.key < $1.key }
    }

    /// Brings every marker in line with the heads: the repair prune runs, for markers a crash left wrong.
    static func rebuild(in repository: Repository) throws {
        var keys = Set<DocumentKey>()
        let documents = try DocumentStore.headReferencesByDocument(in: repository).map { $0[0] }
        for reference in try documents + repository.references(under: root) {
            if let key = try DocumentStore.documentKey(of: reference.target, in: repository) { keys.insert(key) }
        }
        for key in keys.sorted() { try update(key, in: repository) }
    }
}
