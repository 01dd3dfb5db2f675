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
    /// writer removes. Returns the document's versions as read right after
    /// publishing: one read serves the tidying and the conflict marker.
    @discardableResult
    func publishHead(_ id: VersionID, of key: DocumentKey, replacing replaced: [VersionID], message: String) throws -> DocumentVersions {
        let name = ReferenceLayout.headReference(of: key, version: id)
        // A writer of this document killed while creating its head ref left a lock no other writer would take.
        repository.removeStaleLocks(under: ReferenceLayout.headsDirectory(of: key))
        try repository.withLockRetries(on: name) {
            do {
                try repository.updateReference(name, to: id.objectID, expecting: nil, message: message)
            } catch {
                // The identical commit may be published already (same content, parents, device and date).
                guard (error as? GitError)?.isConcurrentModification == true, try repository.reference(name) == id.objectID else { throw error }
            }
        }
        let references = try headReferences(of: key)
        let after = try documentVersions(of: key, amongCandidates: references.map(\.target))
        // A packed head stays until prune tidies it: removing its line rewrites the whole file, whatever the store's size.
        let packed = try repository.packedNames(among: references.map(\.name))
        for reference in references where reference.target != id.objectID && !packed.contains(reference.name) {
            let isReplaced = try replaced.contains(VersionID(reference.target)) || repository.isDescendant(id.objectID, of: reference.target)
            guard isReplaced else { continue }
            // Only tidying: a ref left behind (moved by another writer, or still locked) is filtered out by readers.
            try? repository.withLockRetries(on: reference.name) {
                try repository.deleteReference(reference.name, expecting: reference.target)
            }
        }
        return after
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
    /// Returns the documents whose conflict marker may need updating: all of
    /// them but a document that had no head and got one, which cannot be in
    /// conflict and has no marker left; with their versions when publishing
    /// read them already.
    func publishHeads(_ heads: [PendingHead]) throws -> [DocumentKey: DocumentVersions?] {
        guard heads.count > 8 else {
            var read: [DocumentKey: DocumentVersions?] = [:]
            for head in heads {
                read[head.key] = try publishHead(head.id, of: head.key, replacing: head.replacing, message: head.message)
            }
            return read
        }
        var additions: [(name: String, target: ObjectID)] = []
        var replaced: [String: ObjectID] = [:]
        var headsPerNewDocument: [DocumentKey: Int] = [:]
        for head in heads {
            let name = ReferenceLayout.headReference(of: head.key, version: head.id)
            let existing = try head.existing ?? headReferences(of: head.key)
            if existing.isEmpty { headsPerNewDocument[head.key, default: 0] += 1 }
            if !existing.contains(where: { $0.name == name }) { additions.append((name, head.id.objectID)) }
            for reference in existing where reference.target != head.id.objectID {
                let target = VersionID(reference.target)
                if try head.replacing.contains(target) || repository.isDescendant(head.id.objectID, of: reference.target) {
                    replaced[reference.name] = reference.target
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
            headsPerNewDocument[key] != 1 || (!markers.isEmpty && markers.contains(ConflictMarkers.marker(of: key)))
        }
        return Dictionary(uniqueKeysWithValues: marking.map { ($0, nil) })
    }
}
