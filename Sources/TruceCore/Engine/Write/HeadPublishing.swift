import Foundation
internal import TruceGit

/// The heads step of a `WriteSession`: new heads by compare-and-swap, one by one or packed, then the replaced ones dropped.
extension StoreEngine {
    /// Makes `id` a head of `key`, then drops the head references it descends from.
    ///
    /// The new reference is created first (compare-and-swap against "absent"),
    /// so at every instant each acknowledged version is reachable from some
    /// head reference. Dropping the replaced ones is only tidying: a crash
    /// before it leaves a reference that readers filter out and the next
    /// writer removes. Returns the document's versions as they stand after
    /// publishing: one read serves the tidying and the conflict marker.
    @discardableResult
    func publishHead(_ id: VersionID, of key: DocumentKey, replacing replaced: [VersionID], message: String) throws -> DocumentVersions {
        // A writer of this document killed while creating its head ref left a lock no other writer would take.
        repository.removeStaleLocks(under: ReferenceLayout.headsDirectory(of: key))
        try createHead(id, of: key, message: message)
        let references = try headReferences(of: key)
        let after = try documentVersions(of: key, amongCandidates: references.map(\.target))
        let replacedByThis = try references.filter { reference in
            try reference.target != id.objectID
                && (replaced.contains(VersionID(reference.target)) || repository.isDescendant(id.objectID, of: reference.target))
        }
        try drop(replacedByThis)
        return after
    }

    /// Publishes the single save `known` describes without listing its document again: the heads after it are the
    /// heads before it, less those it replaces, and itself.
    ///
    /// Another writer may publish beside it meanwhile: the names in the
    /// document's folder and the stamp of `packed-refs` then differ from what
    /// the listing and this write account for, and the document is read
    /// again. Otherwise its versions after the write are worked out.
    func publishHead(_ head: PendingHead, known: KnownDocument) throws -> (versions: DocumentVersions, workedOut: Bool) {
        let key = head.key, id = head.id
        takeOverStaleLocks(known.listing)
        try createHead(id, of: key, message: head.message)
        let replaced = Set(head.replacing.map(\.objectID))
        let heads = Set(known.before.allHeads.map(\.id.objectID))
        // Every listed reference the new version descends from goes: the heads it replaces, and a superseded
        // reference a crash left (rare: it is no head, and is checked by walking the graph).
        var dropping: [(name: String, target: ObjectID)] = []
        for reference in known.listing.references where reference.target != id.objectID {
            if replaced.contains(reference.target) {
                dropping.append(reference)
            } else if !heads.contains(reference.target), try repository.isDescendant(id.objectID, of: reference.target) {
                dropping.append(reference)
            }
        }
        try drop(dropping)
        guard noOtherHead(since: known.listing, besides: id) else { return (try documentVersions(of: key), false) }
        var remaining = known.before.allHeads.filter { !dropping.map(\.target).contains($0.id.objectID) }
        var trees: [VersionID: ObjectID] = [known.version.id: known.tree]
        for version in remaining { trees[version.id] = try repository.readCommit(version.id.objectID).tree }
        remaining.append(known.version)
        return (try documentVersions(of: key, heads: remaining, trees: trees), true)
    }

    /// True when no writer but this one, publishing `id`, added a head of the listed document since `listing`:
    /// another writer's head is a new name in the document's folder, or a new line of `packed-refs`. One listing of
    /// the folder's names and one `stat`; no reference is read.
    func noOtherHead(since listing: HeadListing, besides id: VersionID) -> Bool {
        let name = ReferenceLayout.headReference(of: listing.key, version: id)
        let added = repository.looseReferenceNames(under: ReferenceLayout.headsDirectory(of: listing.key)).subtracting(listing.looseNames)
        return added.subtracting([name]).isEmpty && repository.packedReferencesStamp == listing.packedStamp
    }

    /// Removes the stale lock files a listing saw beside a document's heads: a writer of this document killed while
    /// creating its head ref left a lock no other writer would take.
    private func takeOverStaleLocks(_ listing: HeadListing) {
        for lock in listing.lockFiles { StaleLocks.removeIfStale(repository.gitDirectory + lock) }
    }

    /// Creates the head reference of `id` against "absent"; the identical commit published already is no failure.
    private func createHead(_ id: VersionID, of key: DocumentKey, message: String) throws {
        let name = ReferenceLayout.headReference(of: key, version: id)
        try repository.withLockRetries(on: name) {
            do {
                try repository.updateReference(name, to: id.objectID, expecting: nil, message: message)
            } catch {
                // The identical commit may be published already (same content, parents, device and date).
                guard (error as? GitError)?.isConcurrentModification == true, try repository.reference(name) == id.objectID else { throw error }
            }
        }
    }

    /// Deletes the loose references among `references`, which a new head replaced; a packed one stays until prune tidies
    /// it: removing its line rewrites the whole file, whatever the store's size.
    private func drop(_ references: [(name: String, target: ObjectID)]) throws {
        let packed = try repository.packedNames(among: references.map(\.name))
        for reference in references where !packed.contains(reference.name) {
            // Only tidying: a ref left behind (moved by another writer, or still locked) is filtered out by readers.
            try? repository.withLockRetries(on: reference.name) {
                try repository.deleteReference(reference.name, expecting: reference.target)
            }
        }
    }

    /// Publishes many heads at once, as lines of `packed-refs` written in one durable rewrite.
    ///
    /// A loose ref costs two files, two directories and four fsyncs (ref,
    /// reflog, their directories), which made a 10,000-document sync write
    /// 160 MB; packed, a head is one line. The change journal, whose reflog
    /// records every append, is the audit of heads published this way. The
    /// heads each one replaces leave in the same rewrite when they are packed,
    /// and as loose files right after; a head already published stays as it
    /// is. Eight heads or fewer are published one by one (`publishHead`).
    ///
    /// Returns the documents whose versions publishing worked out or read, and those whose conflict marker may
    /// need updating: all of them but a document that had one head (or none) and has one, which cannot be in
    /// conflict and has no marker left.
    ///
    /// `listedBefore`, a batch's listing of its documents' heads made before it wrote, spares reading `packed-refs`
    /// again when that file is as it was then: only the loose heads, which a single save writes, are listed again.
    func publishHeads(_ heads: [PendingHead], listedBefore: BatchHeadListing? = nil) throws -> PublishedHeads {
        guard heads.count > 8 else {
            var published = PublishedHeads()
            for head in heads {
                let after: DocumentVersions
                if let known = head.known, heads.count == 1 {
                    let workedOut: Bool
                    (after, workedOut) = try publishHead(head, known: known)
                    published.versions[head.key] = after
                    // One head before and after: no marker was or is due, and none is looked up. Otherwise the marker
                    // moves to match, and stays so unless another writer published beside this one meanwhile: then
                    // the marker's own rounds read the document again.
                    if workedOut, known.before.allHeads.count <= 1 && after.allHeads.count <= 1 { continue }
                    if workedOut, (try? moveConflictMarker(of: head.key, toMatch: after)) != nil, noOtherHead(since: known.listing, besides: head.id)
                    {
                        continue
                    }
                } else {
                    after = try publishHead(head.id, of: head.key, replacing: head.replacing, message: head.message)
                }
                published.versions[head.key] = after
                published.marking.insert(head.key)
            }
            return published
        }
        var additions: [(name: String, target: ObjectID)] = []
        var replaced: [String: ObjectID] = [:]
        // Per document, the names of its head references once these land: one, and no marker, is a document not in conflict.
        var namesAfter: [DocumentKey: HeadNamesAfter] = [:]
        let listed = try headReferencesOfEachUnlisted(heads, listedBefore: listedBefore)
        for head in heads {
            let name = ReferenceLayout.headReference(of: head.key, version: head.id)
            let existing = head.existing ?? listed[head.key] ?? []
            namesAfter[head.key, default: HeadNamesAfter(existing.lazy.map(\.name))].insert(name)
            if !existing.contains(where: { $0.name == name }) { additions.append((name, head.id.objectID)) }
            for reference in existing where reference.target != head.id.objectID {
                let target = VersionID(reference.target)
                if try head.replacing.contains(target) || repository.isDescendant(head.id.objectID, of: reference.target) {
                    replaced[reference.name] = reference.target
                    namesAfter[head.key]?.remove(reference.name)
                }
            }
        }
        let replacedReferences = replaced.sorted { $0.key < $1.key }.map { (name: $0.key, target: $0.value) }
        let packedReplaced = try repository.packedNames(among: replacedReferences.map(\.name))
        try repository.withLockRetries(on: "packed-refs") {
            try repository.updatePackedReferences(adding: additions, removing: packedReplaced)
        }
        // Only tidying, as in publishHead: a replaced ref left behind is filtered out by readers.
        try? repository.withLockRetries(on: "packed-refs") {
            try repository.deleteReferences(replacedReferences)
        }
        // Markers are few (one per document in conflict): one listing, not one lookup per document.
        let markers = Set(try repository.references(under: ConflictMarkers.root).map(\.name))
        let marking = Set(heads.map(\.key)).filter { key in
            namesAfter[key]?.count != 1 || (!markers.isEmpty && markers.contains(ConflictMarkers.marker(of: key)))
        }
        return PublishedHeads(versions: [:], marking: marking)
    }

    /// The head references of the documents of `heads` that came without them, read together: one listing of the
    /// loose heads and one look at `packed-refs` (none in a store without heads), not one listing per document.
    private func headReferencesOfEachUnlisted(
        _ heads: [PendingHead], listedBefore before: BatchHeadListing?
    ) throws -> [DocumentKey: [(name: String, target: ObjectID)]] {
        let keys = Array(Set(heads.lazy.filter { $0.existing == nil }.map(\.key)))
        guard !keys.isEmpty, try repository.mayHaveReferences(under: ReferenceLayout.headsRoot) else { return [:] }
        // An import of a million documents read each batch's lines of `packed-refs` twice (the second time, a twentieth
        // of the import): they are taken as the batch listed them, unless another writer rewrote the file since.
        if let before, before.looseNames.isEmpty, case let packed = keys.compactMap({ before.byKey[$0] }), packed.count == keys.count {
            let loose = try repository.listing(
                underEach: keys.map(ReferenceLayout.headsDirectory(of:)), listingLooseUnder: ReferenceLayout.headsRoot, readingPacked: false)
            // The stamp after the loose heads, as a listing reads the file after them: a head another writer packed
            // once they were listed is in a file whose stamp is no longer the batch's.
            if repository.packedReferencesStamp == before.packedStamp {
                return Dictionary(
                    uniqueKeysWithValues: keys.indices.map { index in
                        (keys[index], packed[index].filter { !loose.looseNames.contains($0.name) } + loose.references[index])
                    })
            }
        }
        return Dictionary(uniqueKeysWithValues: zip(keys, try headReferences(ofEach: keys)))
    }
}

/// A batch's documents' heads as it listed them before writing (`WriteSession.saveBatch`), with what the listing saw:
/// the loose heads among them and the stamp of `packed-refs` then.
struct BatchHeadListing {
    let byKey: [DocumentKey: [(name: String, target: ObjectID)]]
    let looseNames: Set<String>
    let packedStamp: FileStamp?
}

/// What publishing heads leaves: the versions of documents it worked out or read after publishing, and the documents
/// whose conflict marker may need updating.
struct PublishedHeads {
    var versions: [DocumentKey: DocumentVersions] = [:]
    var marking: Set<DocumentKey> = []
}
