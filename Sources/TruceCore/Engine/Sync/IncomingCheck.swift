import Foundation
internal import TruceGit

/// Each document's head references in this store, read once per document, and not at all while the store has no heads
/// (most of a first sync).
struct LocalHeads {
    let storeHasHeads: Bool
    private let engine: StoreEngine
    private var byKey: [DocumentKey: [ObjectID]] = [:]

    init(in engine: StoreEngine) throws {
        self.engine = engine
        storeHasHeads = try engine.repository.mayHaveReferences(under: ReferenceLayout.headsRoot)
    }

    mutating func of(_ key: DocumentKey) throws -> [ObjectID] {
        if let known = byKey[key] { return known }
        let found = storeHasHeads ? try engine.headReferences(of: key).map(\.target) : []
        byKey[key] = found
        return found
    }
}

/// What one fetch brought, checked: the heads to adopt by document, and the manifests to remember.
struct IncomingHeads {
    /// Accepted heads, by their document.
    var byKey: [DocumentKey: [ObjectID]] = [:]
    /// Manifests of other replicas whose every listed head was accepted: `name` moves from `seen` to `target` once adopted.
    var manifests: [(name: String, target: ObjectID, seen: ObjectID?)] = []
    /// Head refs of a hub (not a Truce store) from before manifests, accepted: a push deletes them once this replica's
    /// manifest lists them.
    var legacyReferences: [String] = []
    /// Every ref under `refs/truce/` the other side advertised.
    var advertised: [String: ObjectID] = [:]
    /// For each accepted head a manifest listed, that manifest (empty when anything was refused).
    var via: [ObjectID: ObjectID] = [:]
    /// Every version the checks read, by id: adoption takes them from here instead of reading each commit again.
    var versions: [VersionID: Version] = [:]
}

extension StoreEngine {
    /// Fetches what the other side's replica manifests list and this store lacks into a quarantine, checks each head
    /// and the history it brings, admits the good ones' objects into this store, and returns them; the bad ones go
    /// into `refused`.
    ///
    /// A head is refused when any commit of the history it brings fails the
    /// checks of `incomingProblem`; the others are adopted as if it had not
    /// been listed. Nothing of a refused head stays in the store. Head refs
    /// (`refs/truce/heads/…`) are read too: a Truce store's own heads, or
    /// those a hub holds from before manifests. Without `readingManifests`
    /// only head refs are read: a store's heads hold all it took from manifests.
    func fetchChecked(
        from remote: String, readingManifests: Bool, refused: inout [SyncReport.RefusedHead],
        progress: ((TransferCounts) -> Void)? = nil, checking: ((Int, Int) -> Void)? = nil, storing: ((Int, Int) -> Void)? = nil,
        cancellation: Cancellation? = nil
    ) throws -> IncomingHeads {
        let replica = try existingReplicaID()
        let known = try repository.references(under: ReplicaManifest.root)
        let knownTargets = Dictionary(known.map { ($0.name, $0.target) }, uniquingKeysWith: { first, _ in first })
        let quarantine = try Quarantine(of: repository, offering: known)
        let incoming = quarantine.repository
        let advertised: [(name: String, target: ObjectID)]
        do throws(GitError) {
            if let path = SyncSession.localPath(of: remote) {
                advertised = try quarantine.borrowObjects(of: path, refsMatching: "refs/truce/*")
            } else {
                advertised = try incoming.fetch(
                    from: remote, refsMatching: "refs/truce/*",
                    wanting: { advertised throws(GitError) in
                        var wanted: [String] = []
                        for reference in advertised {
                            let isListing =
                                (readingManifests && reference.name.hasPrefix(ReplicaManifest.root))
                                || reference.name.hasPrefix(ReferenceLayout.headsRoot)
                            if isListing, try !incoming.containsCommit(reference.target) { wanted.append(reference.name) }
                        }
                        return wanted
                    }, progress: progress, cancellation: cancellation)
            }
        } catch  where cancellation?.isCancelled == true {
            // The transfer callback stopped the download: nothing of it is adopted (the quarantine goes).
            throw TruceError.cancelled
        } catch  where error.message.contains(repository.gitDirectory) {
            // libgit2 names the file it failed to write: a file of this store (a full disk, say) is this store failing.
            throw TruceError.storeFailure(error)
        } catch {
            throw TruceError.invalidRemote(remote, reason: error.message)
        }
        var result = IncomingHeads()
        result.advertised = Dictionary(advertised.map { ($0.name, $0.target) }, uniquingKeysWith: { first, _ in first })
        // A Truce store's head refs are its own; a hub's are what replicas pushed before manifests, and go once adopted.
        let isTruceStore = result.advertised.keys.contains(ChangeJournal.reference)
        // Each head with the ref that listed it and, for a pre-manifest head ref, the directory its name gives.
        var candidates: [(id: ObjectID, reference: String, legacy: Bool)] = []
        // The manifest that listed each head first: what this replica's next manifest lists in its place.
        var via: [ObjectID: ObjectID] = [:]
        // The newest manifest read per replica, which its copy here moves to once everything is adopted.
        var newest: [String: (target: ObjectID, seen: ObjectID?, sequence: Int)] = [:]
        var read = Set<ObjectID>(), manifestsRead: [ObjectID] = [], chainCommits: [ObjectID] = []
        var pending: [(replica: String, target: ObjectID, name: String)] = []
        for reference in advertised where readingManifests && reference.name.hasPrefix(ReplicaManifest.root) {
            guard let other = ReplicaManifest.replica(ofReference: reference.name) else {
                refused.append(
                    SyncReport.RefusedHead(
                        manifest: SyncReport.ManifestID(reference.target), reference: reference.name,
                        reason: "it is not a manifest reference Truce writes (refs/truce/replicas/<32 hex>)"))
                continue
            }
            pending.append((other, reference.target, reference.name))
        }
        while let item = pending.popLast() {
            guard read.insert(item.target).inserted else { continue }
            // Our own manifest comes back as we pushed it; one we never wrote means a copy of this store syncs as the
            // same replica, and its heads are adopted like anyone's (its manifest is not kept: ours has that name).
            let isOurs = item.replica == replica
            if isOurs, try repository.containsCommit(item.target) { continue }
            let seen = isOurs ? nil : knownTargets[ReplicaManifest.reference(of: item.replica)]
            guard item.target != seen else { continue }
            guard try incoming.containsCommit(item.target) else {
                refused.append(
                    SyncReport.RefusedHead(manifest: SyncReport.ManifestID(item.target), reference: item.name, reason: "its manifest did not arrive"))
                continue
            }
            let sequence = try IncomingCheck.sequence(of: item.target, in: incoming)
            if let seen, try IncomingCheck.sequence(of: seen, in: incoming) >= sequence { continue }  // we hold a later one, from elsewhere
            switch try ReplicaManifest.listing(from: item.target, after: seen, replica: item.replica, in: incoming) {
            case .failure(let problem):
                refused.append(
                    SyncReport.RefusedHead(
                        manifest: SyncReport.ManifestID(item.target), reference: item.name, reason: "its manifest chain is damaged: \(problem.reason)"
                    ))
            case .success(let listing):
                chainCommits += listing.commits
                candidates += listing.heads.map { ($0, item.name, false) }
                pending += listing.manifests.map { ($0.replica, $0.id, ReplicaManifest.reference(of: $0.replica)) }
                guard !isOurs else { continue }
                manifestsRead.append(item.target)
                for head in listing.heads where via[head] == nil { via[head] = item.target }
                if sequence > newest[item.replica]?.sequence ?? -1 { newest[item.replica] = (item.target, seen, sequence) }
            }
        }
        for reference in advertised where reference.name.hasPrefix(ReferenceLayout.headsRoot) {
            candidates.append((reference.target, reference.name, true))
        }
        let refusedBefore = refused.count
        var accepted = Set<ObjectID>(), rejected = Set<ObjectID>()
        var admitted: [ObjectID] = [], hidden: [ObjectID] = known.map(\.target)
        var localHeads = try LocalHeads(in: self)
        // Every object the checks below read: when the download holds nothing else, it joins the store as it came.
        var checked: Set<ObjectID> = [ObjectID.emptyTree]
        checked.formUnion(chainCommits)
        for (index, candidate) in candidates.enumerated() where !accepted.contains(candidate.id) || candidate.legacy {
            if index % 256 == 0 { checking?(index, candidates.count) }
            if rejected.contains(candidate.id) { continue }
            switch headCheckOrError(candidate, from: incoming, localHeads: &localHeads, recording: &checked, versions: &result.versions)
            {
            case .failure(let problem):
                refused.append(SyncReport.RefusedHead(version: VersionID(candidate.id), reference: candidate.reference, reason: problem.reason))
                rejected.insert(candidate.id)
            case .success(let key):
                if candidate.legacy, !isTruceStore { result.legacyReferences.append(candidate.reference) }
                guard accepted.insert(candidate.id).inserted else { continue }
                if result.byKey[key] == nil { hidden += try localHeads.of(key) }
                result.byKey[key, default: []].append(candidate.id)
                admitted.append(candidate.id)
            }
        }
        if !candidates.isEmpty { checking?(candidates.count, candidates.count) }
        // Anything refused: no copy moves and nothing counts as listed by a manifest, so the next sync reads it all again.
        if refused.count == refusedBefore, !refused.contains(where: { $0.reference.hasPrefix(ReplicaManifest.root) }) {
            for (replica, manifest) in newest.sorted(by: { $0.key < $1.key }) {
                result.manifests.append((ReplicaManifest.reference(of: replica), manifest.target, manifest.seen))
            }
            admitted += manifestsRead
            result.via = via
        }
        // The last point a cancellation stops at before this store changes: the quarantine, and what it holds, goes.
        try cancellation?.check()
        try quarantine.admit(admitted, hiding: hidden, whenOnly: refused.isEmpty ? checked : nil, progress: storing)
        return result
    }

    /// `headCheck`, with a failure to read what the head brings (a missing or unreadable object) as its problem.
    private func headCheckOrError(
        _ candidate: (id: ObjectID, reference: String, legacy: Bool), from incoming: Repository, localHeads: inout LocalHeads,
        recording checked: inout Set<ObjectID>, versions: inout [VersionID: Version]
    )
        -> Result<DocumentKey, ReplicaManifest.ManifestProblem>
    {
        do {
            return try headCheck(candidate, from: incoming, localHeads: &localHeads, recording: &checked, versions: &versions)
        } catch let error as TruceError {
            return .failure(.init(error.errorDescription ?? "\(error)"))
        } catch {
            return .failure(.init("\(error)"))
        }
    }

    /// The document of a head another store listed, or what is wrong with it and the history it brings.
    ///
    /// A commit this store already holds was checked when it arrived (or written here): only its document is read.
    /// The objects found sound go into `checked`, the versions they make into `versions`; `localHeads` remembers each
    /// document's head references here.
    private func headCheck(
        _ candidate: (id: ObjectID, reference: String, legacy: Bool), from incoming: Repository, localHeads: inout LocalHeads,
        recording checked: inout Set<ObjectID>, versions: inout [VersionID: Version]
    )
        throws -> Result<DocumentKey, ReplicaManifest.ManifestProblem>
    {
        let id = candidate.id
        guard try incoming.rawCommitIfPresent(id) != nil else { return .failure(.init("it is not a commit")) }
        guard let message = VersionMessage(parsing: try incoming.readCommit(id).message) else { return .failure(.init("it is not a Truce version")) }
        let key = try DocumentKey(message.key)
        if candidate.legacy {
            let directory = ReferenceLayout.headsDirectory(of: key)
            guard let named = ReferenceLayout.headsDirectory(ofReference: candidate.reference, target: VersionID(id)) else {
                return .failure(.init("it is not a head reference Truce writes (refs/truce/heads/<2 hex>/<38 hex>/<its version id>)"))
            }
            guard named == directory else { return .failure(.init("it names \(TruceError.quoted(key.rawValue)), whose heads live elsewhere")) }
        }
        // Most heads are new here, and a miss that rescans the packs costs more than the check: a miss only checks again.
        let hidden = try localHeads.of(key)
        if try repository.containsObjectWithoutRescan(id) { return .success(key) }
        for commit in try incoming.walk(from: [id], hiding: hidden) {
            if let problem = try IncomingCheck.problem(of: commit, key: key, in: incoming, recording: &checked, versions: &versions) {
                return .failure(.init(commit == id ? "it \(problem)" : "its history does: version \(commit.short) \(problem)"))
            }
        }
        return .success(key)
    }
}

/// The checks a commit another store sent must pass before any head adopts it.
enum IncomingCheck {
    /// What is wrong with a commit another store sent as a version of `key`, nil when nothing.
    ///
    /// git's own checks of the commit header, then Truce's layout: a Truce
    /// version message naming `key`, and a tree that holds exactly the
    /// document at its key (one entry per level, a blob of mode 100644 at the
    /// end, canonical bytes) or, for a deletion, nothing. Tree entry names are
    /// then the key's segments, which key validation and libgit2's own entry
    /// checks (what a local save runs into) have passed.
    /// The commit, its trees and its blob go into `checked` when nothing is wrong, and the version it makes into `versions`.
    static func problem(
        of id: ObjectID, key: DocumentKey, in repository: Repository, recording checked: inout Set<ObjectID>,
        versions: inout [VersionID: Version]
    ) throws -> String? {
        guard let raw = try repository.rawCommit(id) else { return "is not a commit" }
        if let problem = commitHeaderProblem(raw) { return "is a commit git fsck refuses: \(problem)" }
        let commit = try repository.readCommit(id)
        guard let message = VersionMessage(parsing: commit.message) else { return "is not a Truce version" }
        guard Array(message.key.utf8) == Array(key.rawValue.utf8) else {
            return "is a version of \(TruceError.quoted(message.key)), not of \(TruceError.quoted(key.rawValue))"
        }
        var objects = [id]
        if let chain = try canonicalChain(of: key, from: commit.tree, in: repository) {
            guard try repository.containsBlob(chain.blob) else { return "holds no file at its key" }
            let ids = chain.trees.dropFirst() + [chain.blob]
            for (segment, entryID) in zip(key.segments, ids) {
                if let problem = repository.treeEntryNameProblem(String(segment), id: entryID, isTree: entryID != chain.blob) {
                    return "has a tree entry git refuses: \(problem)"
                }
            }
            checked.formUnion(objects + chain.trees + [chain.blob])
            versions[commit.versionID] = StoreEngine.version(of: commit, message: message, key: key, isDeletion: false)
            return nil
        }
        // Not the canonical form: the slow reading below says what is wrong (or takes a deletion's empty tree).
        var expected = ObjectID.emptyTree
        let entry = try repository.entry(at: key.rawValue, inTree: commit.tree)
        if let entry {
            guard !entry.isTree, try repository.containsBlob(entry.id) else { return "holds no file at its key" }
            var segments = key.segments.map(String.init)
            let leaf = segments.removeLast()
            if let problem = repository.treeEntryNameProblem(leaf, id: entry.id, isTree: false) { return "has a tree entry git refuses: \(problem)" }
            expected = ObjectID.treeHash(ofEntry: leaf, id: entry.id, isTree: false)
            objects += [entry.id, expected]
            for segment in segments.reversed() {
                if let problem = repository.treeEntryNameProblem(segment, id: expected, isTree: true) {
                    return "has a tree entry git refuses: \(problem)"
                }
                expected = ObjectID.treeHash(ofEntry: segment, id: expected, isTree: true)
                objects.append(expected)
            }
        }
        guard commit.tree == expected else {
            return "has a tree that holds more than its document at its key (or not in git's canonical form)"
        }
        checked.formUnion(objects)
        versions[commit.versionID] = StoreEngine.version(of: commit, message: message, key: key, isDeletion: entry == nil)
        return nil
    }

    /// The trees from `tree` down to the document and its blob, when every tree is the one git writes for a single
    /// entry, `40000 <segment>` down to `100644 <leaf>`; nil for any other tree.
    ///
    /// Read raw, one object per level: most incoming versions are in this
    /// form, and it proves what the canonical-hash comparison proves (an id
    /// names the bytes it was computed from) without parsing a tree.
    private static func canonicalChain(of key: DocumentKey, from tree: ObjectID, in repository: Repository) throws
        -> (trees: [ObjectID], blob: ObjectID)?
    {
        var trees: [ObjectID] = [], current = tree
        let segments = key.segments
        for (index, segment) in segments.enumerated() {
            guard let raw = try repository.rawTreeIfPresent(current) else { return nil }
            let entry = Array((index == segments.count - 1 ? "100644 " : "40000 ").utf8) + Array(segment.utf8) + [0]
            guard raw.count == entry.count + 20, raw.starts(with: entry) else { return nil }
            trees.append(current)
            current = ObjectID(bytes: raw[entry.count...])
        }
        return (trees, current)
    }

    /// A manifest's place in its replica's sequence (0 for a commit that is not one).
    static func sequence(of manifest: ObjectID, in repository: Repository) throws -> Int {
        ReplicaManifest.header(parsing: try repository.readCommit(manifest).message)?.sequence ?? 0
    }
}
