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
enum ConflictMarkers {
    static let root = "refs/truce/conflicts/"

    /// Up to this many documents, their markers are moved one by one; more share one rewrite of `packed-refs`, as a
    /// batch's heads do (`publishHeads`).
    static let movedOneByOne = 8

    static func marker(of key: DocumentKey) -> String {
        marker(ofHeadsDirectory: ReferenceLayout.headsDirectory(of: key))
    }

    /// The marker of the document whose head references live in `directory` (with its trailing slash).
    static func marker(ofHeadsDirectory directory: some StringProtocol) -> String {
        root + directory.dropFirst(ReferenceLayout.headsRoot.count).dropLast()
    }
}

extension StoreEngine {
    /// Makes `key`'s marker match its state: present while in conflict, absent otherwise.
    ///
    /// Starts from `known`, the heads as the caller read them after its write (nil reads them here), and reads
    /// them again only after moving the marker. Returns the document's heads as last read, which callers reuse
    /// instead of reading them again.
    @discardableResult
    func updateConflictMarker(of key: DocumentKey, startingFrom known: DocumentVersions? = nil) throws -> DocumentVersions {
        var versions = try known ?? documentVersions(of: key)
        for _ in 0..<8 {
            guard try moveConflictMarker(of: key, toMatch: versions) else { break }  // marker and state agree
            versions = try documentVersions(of: key)
        }
        return versions
    }

    /// `updateConflictMarker` for many documents: the markers set and deleted in one rewrite of `packed-refs` (a loose
    /// marker is still deleted by itself), and the documents whose marker was deleted listed again, each one seen
    /// with several heads by then (or not read) brought in line alone. Returns each document's heads as read; a
    /// document whose heads could not be read is left out, as `updateConflictMarker` would throw.
    ///
    /// A marker set wrongly is only a hint `status` checks again; a marker deleted wrongly hides a conflict from it,
    /// which is why only the deletions are checked again. Resolving a thousand documents moved their markers one
    /// loose file at a time, each with its lock and its unlink: most of the write (`truce-bench --only resolve`).
    func updateConflictMarkers(of keys: [DocumentKey], startingFrom known: [DocumentKey: DocumentVersions]) -> [DocumentKey: DocumentVersions] {
        var read: [DocumentKey: DocumentVersions] = [:]
        if keys.count > ConflictMarkers.movedOneByOne, (try? moveConflictMarkers(of: keys, startingFrom: known, read: &read)) != nil { return read }
        for key in keys { read[key] = try? updateConflictMarker(of: key, startingFrom: known[key]) }
        return read
    }

    /// The batch of `updateConflictMarkers`; throws before it has moved a marker, or leaves the rest to the caller's
    /// documents one by one.
    private func moveConflictMarkers(
        of keys: [DocumentKey], startingFrom known: [DocumentKey: DocumentVersions], read: inout [DocumentKey: DocumentVersions]
    ) throws {
        // Each document's own folder of heads, not one listing of every loose head: a store of single saves has a
        // loose head per document.
        for key in keys { read[key] = try? known[key] ?? documentVersions(of: key) }
        // One listing says which markers are set and which of them are loose files.
        let listing = try repository.listing(underEach: [ConflictMarkers.root], listingLooseUnder: ConflictMarkers.root)
        let markers = Dictionary(listing.references[0].map { ($0.name, $0.target) }, uniquingKeysWith: { first, _ in first })
        var additions: [(name: String, target: ObjectID)] = []
        var deletions: [(key: DocumentKey, name: String, target: ObjectID)] = []
        for key in keys {
            guard let versions = read[key] else { continue }
            let name = ConflictMarkers.marker(of: key)
            let marked = markers[name]
            if versions.allHeads.count > 1, marked == nil, let current = versions.current { additions.append((name, current.id.objectID)) }
            if versions.allHeads.count <= 1, let marked { deletions.append((key, name, marked)) }
        }
        let packedDeletions = try repository.packedNames(among: deletions.map(\.name))
        try repository.withLockRetries(on: "packed-refs") {
            try repository.updatePackedReferences(adding: additions, removing: packedDeletions)
        }
        for deletion in deletions where listing.looseNames.contains(deletion.name) {
            try? repository.withLockRetries(on: deletion.name) {
                do {
                    _ = try repository.deleteReference(deletion.name, expecting: deletion.target)
                } catch let error as GitError where error.isConcurrentModification {
                    return  // another writer moved it: its own update brings it in line
                }
            }
        }
        // Another writer may have published a second head of a document once it was read here, and seen its marker
        // still set: that document is read again, and its marker moved alone.
        for deletion in deletions where (try? headReferences(of: deletion.key).count) != 1 {
            read[deletion.key] = try? updateConflictMarker(of: deletion.key)
        }
    }

    /// Sets `key`'s marker when `versions` has several heads and deletes it when it has one, each against the marker
    /// as read; true when it moved (or another writer moved it meanwhile), false when marker and state agreed.
    func moveConflictMarker(of key: DocumentKey, toMatch versions: DocumentVersions) throws -> Bool {
        let name = ConflictMarkers.marker(of: key)
        let marked = try repository.reference(name)
        let hasSeveralHeads = versions.allHeads.count > 1
        if hasSeveralHeads, marked == nil, let current = versions.current {
            try repository.withLockRetries(on: name) {
                do {
                    try repository.updateReference(name, to: current.id.objectID, expecting: nil, message: "truce: \(key.rawValue) is in conflict")
                } catch let error as GitError where error.isConcurrentModification {
                    return  // another writer marked it
                }
            }
            return true
        }
        if !hasSeveralHeads, let marked {
            try repository.withLockRetries(on: name) {
                do {
                    try repository.deleteReference(name, expecting: marked)
                } catch let error as GitError where error.isConcurrentModification {
                    return
                }
            }
            return true
        }
        return false
    }

    /// The documents whose marker is set, as git has them: a hint, which a reader checks against the heads.
    func markedKeys() throws -> [DocumentKey] {
        try repository.references(under: ConflictMarkers.root).compactMap { try documentKey(of: $0.target) }
    }

    /// Brings every marker in line with the heads: the repair prune runs, for markers a crash left wrong.
    ///
    /// A document with one head reference and no marker is as it should be, and is not read: the repair reads the
    /// documents with several head references or a marker, not the store. `headGroups` are the head references by
    /// document when the caller has just listed them (`headReferencesByDocument`).
    func rebuildConflictMarkers(headGroups: [[(name: String, target: ObjectID)]]? = nil) throws {
        let markers = try repository.references(under: ConflictMarkers.root)
        let marked = Set(markers.map(\.name))
        var keys = Set<DocumentKey>()
        for references in try headGroups ?? headReferencesByDocument() where !references.isEmpty {
            let name = references[0].name
            let directory = name.utf8.lastIndex(of: UInt8(ascii: "/")).map { name[...$0] } ?? ""
            guard references.count > 1 || marked.contains(ConflictMarkers.marker(ofHeadsDirectory: directory)) else { continue }
            if let key = try documentKey(of: references[0].target) { keys.insert(key) }
        }
        for marker in markers {
            if let key = try documentKey(of: marker.target) { keys.insert(key) }
        }
        let sorted = keys.sorted()
        let read = updateConflictMarkers(of: sorted, startingFrom: [:])
        // A document whose heads cannot be read fails the repair, as it did one document at a time.
        for key in sorted where read[key] == nil { try updateConflictMarker(of: key) }
    }
}
