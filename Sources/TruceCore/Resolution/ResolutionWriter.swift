import Foundation

/// How a resolution settles the conflict: with new content, or by keeping one head's tree as it is.
enum Settlement {
    case content(Data?)
    case kept(Version)
}

extension DocumentStore {
    /// Writes the resolution commit of `conflict` and drops the heads it settles, in one step.
    ///
    /// Parents are the current version first, then every loser, so git's
    /// ancestry records what was resolved. The new head reference is created
    /// before the settled ones are dropped: a crash in between leaves refs that
    /// readers ignore (their versions are ancestors of the resolution), never a
    /// lost head. A save that landed after `conflict` was read is not a parent,
    /// so it stays a head.
    func write(_ conflict: ConflictSet, settlement: Settlement, resolver: String, device: String) throws(TruceError) -> ResolveResult {
        let author = try Self.authorName(device)
        let key = conflict.key
        let (version, state) = try withRepository { repository in
            let now = Date()
            let id = try Self.writeResolution(conflict, settlement: settlement, resolver: resolver, author: author, date: now, in: repository)
            try Self.publishHead(id, of: key, replacing: conflict.heads.map(\.version.id), message: "truce: resolve \(key.rawValue) with \(resolver)",
                                 in: repository)
            let recorded = Self.recordPublished(key, in: repository) {
                try ChangeJournal.append([Change(kind: .resolution, key: key, version: id, author: author, date: now)], in: repository)
            }
            let after = try recorded ?? Self.documentVersions(of: key, in: repository)
            return (try after.heads.first { $0.id == id } ?? Self.readVersion(id, of: key, in: repository), after.state)
        }
        eventHub.publish(DocumentStateChange(key: key, previous: .inConflict, current: state, version: version.id))
        return .resolved(version, resolver: resolver, state: state)
    }

    /// Writes many resolutions as one pack, then publishes their heads together: `resolveAll`'s bulk path.
    func writeAll(_ settled: [(conflict: ConflictSet, settlement: Settlement, resolver: String)], device: String) throws(TruceError)
        -> [DocumentKey: ResolveResult] {
        guard !settled.isEmpty else { return [:] }
        let author = try Self.authorName(device)
        let (results, events) = try withRepository { repository in
            let bulk = try BulkWriter(path: repository.path)
            let now = Date()
            var heads: [PendingHead] = []
            var changes: [Change] = []
            for (conflict, settlement, resolver) in settled {
                let id = try Self.writeResolution(conflict, settlement: settlement, resolver: resolver, author: author, date: now,
                                                  in: bulk.repository, recording: bulk)
                heads.append(PendingHead(key: conflict.key, id: id, replacing: conflict.heads.map(\.version.id),
                                         message: "truce: resolve \(conflict.key.rawValue) with \(resolver)"))
                changes.append(Change(kind: .resolution, key: conflict.key, version: id, author: author, date: now))
            }
            let journal = try ChangeJournal.prepare(changes, in: bulk.repository, recording: bulk)
            try bulk.flush()
            try Self.publishHeadsConcurrently(heads, path: repository.path)
            try? { if try !ChangeJournal.publish(journal, in: repository) { try ChangeJournal.append(changes, in: repository) } }()
            var results: [DocumentKey: ResolveResult] = [:]
            var events: [DocumentStateChange] = []
            for (head, (_, _, resolver)) in zip(heads, settled) {
                let after = try Self.documentVersions(of: head.key, in: repository)
                let version = try after.heads.first { $0.id == head.id } ?? Self.readVersion(head.id, of: head.key, in: repository)
                results[head.key] = .resolved(version, resolver: resolver, state: after.state)
                events.append(DocumentStateChange(key: head.key, previous: .inConflict, current: after.state, version: head.id))
            }
            return (results, events)
        }
        events.forEach(eventHub.publish)
        return results
    }

    /// Writes the resolution commit of `conflict`: parents the current version first, then every loser; no ref moves.
    static func writeResolution(_ conflict: ConflictSet, settlement: Settlement, resolver: String, author: String, date: Date,
                                in repository: Repository, recording bulk: BulkWriter? = nil) throws -> VersionID {
        let tree: ObjectID
        switch settlement {
        case .content(let content): tree = try writeTree(holding: content, at: conflict.key, in: repository, recording: bulk)
        case .kept(let version): tree = try repository.readCommit(version.id).tree
        }
        let parents = conflict.heads.map(\.version.id)
        let message = VersionMessage(kind: .resolve, key: conflict.key.rawValue, device: author, resolvedBy: resolver,
                                     resolves: Array(parents.dropFirst()))
        let id = try repository.writeCommit(tree: tree, parents: parents, author: Signature(device: author, date: date),
                                            committer: Signature(device: author, date: date), message: message.text)
        bulk?.record(id)
        return id
    }

    /// Turns the newest resolution among the heads back into the conflict it settled: its parents become heads again.
    ///
    /// The resolution's parents get their head references back before the
    /// resolution's is dropped, so a crash in between leaves the resolution in
    /// place. The resolution itself stays in the object database until `prune`.
    @discardableResult
    public func reopen(_ key: DocumentKey) throws(TruceError) -> DocumentVersions {
        let (before, after) = try withRepository { repository in
            let before = try Self.documentVersions(of: key, in: repository)
            guard before.current != nil else { throw TruceError.documentNotFound(key) }
            guard let resolution = before.heads.filter(\.isResolution).max(by: { Self.isMoreCurrent($1, $0) }) else {
                throw TruceError.nothingToReopen(key)
            }
            for parent in resolution.parents {
                let name = ReferenceLayout.headReference(of: key, version: parent)
                try Self.withLockRetries(on: name, in: repository) {
                    do {
                        try repository.updateReference(name, to: parent, expecting: nil, message: "truce: reopen \(key.rawValue)")
                    } catch {
                        guard (error as? GitError)?.isConcurrentModification == true, try repository.reference(name) == parent else { throw error }
                    }
                }
            }
            let resolutionReference = ReferenceLayout.headReference(of: key, version: resolution.id)
            try Self.withLockRetries(on: resolutionReference, in: repository) {
                try repository.deleteReference(resolutionReference, expecting: resolution.id)
            }
            let recorded = Self.recordPublished(key, in: repository) {}
            return (before.state, try recorded ?? Self.documentVersions(of: key, in: repository))
        }
        if let current = after.current {
            eventHub.publish(DocumentStateChange(key: key, previous: before, current: after.state, version: current.id))
        }
        return after
    }
}
