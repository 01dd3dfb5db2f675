import Foundation
import Synchronization
internal import TruceGit

/// Each document's head references in this store, read once per document, and not at all while the store has no heads
/// (most of a first sync).
struct LocalHeads {
    let storeHasHeads: Bool
    private let engine: StoreEngine
    private var byKey: [DocumentKey: [ObjectID]] = [:]

    /// `storeHasHeads` as read when the receive began: heads the batches before this one adopted are then not looked
    /// up, which only lets the walks of the checks go through their commits again.
    init(in engine: StoreEngine, storeHasHeads: Bool) {
        self.engine = engine
        self.storeHasHeads = storeHasHeads
    }

    mutating func of(_ key: DocumentKey) throws -> [ObjectID] {
        if let known = byKey[key] { return known }
        let found = storeHasHeads ? try engine.headReferences(of: key).map(\.target) : []
        byKey[key] = found
        return found
    }
}

/// One batch of what a fetch brought, checked and admitted: the heads to adopt by document, and, with the last batch,
/// the manifests to remember.
struct IncomingHeads {
    /// Accepted heads, by their document.
    var byKey: [DocumentKey: [ObjectID]] = [:]
    /// Manifests of other replicas whose every listed head was accepted: `name` moves from `seen` to `target` once adopted.
    var manifests: [(name: String, target: ObjectID, seen: ObjectID?)] = []
    /// Head refs of a hub (not a Truce store) from before manifests, accepted: a push deletes them once this replica's
    /// manifest lists them.
    var legacyReferences: [String] = []
    /// For each accepted head a manifest listed, that manifest (empty once anything was refused).
    var via: [ObjectID: ObjectID] = [:]
    /// Every version the checks read, by id: adoption takes them from here instead of reading each commit again.
    var versions = CheckedVersions()
}

extension StoreEngine {
    /// Checks `batch` of the heads `listing` holds, each with the history it brings, and admits the good ones' objects
    /// into this store; the bad ones go into `refused`. With `isLast`, the manifests read join the store too, and the
    /// result names the copies to move, when nothing at all was refused.
    ///
    /// A head is refused when any commit of the history it brings fails the
    /// checks of `incomingProblem`; the others are adopted as if it had not
    /// been listed. Nothing of a refused head stays in the store.
    func checkAndAdmit(
        _ batch: Slice<IncomingCandidates>, isLast: Bool, of listing: inout IncomingListing, refused: inout [SyncReport.RefusedHead],
        checking: ((Int, Int) -> Void)? = nil, storing: ((Int, Int) -> Void)? = nil, cancellation: Cancellation? = nil
    ) throws -> IncomingHeads {
        let incoming = listing.quarantine.repository
        var result = IncomingHeads()
        let refusedBefore = refused.count
        var admitted: [ObjectID] = [], hidden = listing.known
        // A head the batches before adopted bounds no walk here: a document whose heads a first sync lists in two
        // batches (rare) has its history checked again, where a lookup per document would cost every batch.
        var localHeads = LocalHeads(in: self, storeHasHeads: listing.storeHadHeads)
        // Every object the checks below read: when the download holds nothing else, it joins the store as it came.
        var checked = CheckedObjects([ObjectID.emptyTree])
        let total = listing.candidates.count
        let checkedAhead = headChecksOnTwoThreads(batch, of: &listing, recording: &checked, versions: &result.versions, checking: checking)
        for (index, candidate) in zip(batch.indices, batch) where !listing.accepted.contains(candidate.id) || candidate.legacy {
            if index % 256 == 0, checkedAhead == nil { checking?(index, total) }
            if listing.rejected.contains(candidate.id) { continue }
            let outcome =
                checkedAhead?[index - batch.startIndex]
                ?? headCheckOrError(candidate, from: incoming, localHeads: &localHeads, recording: &checked, versions: &result.versions)
            switch outcome {
            case .failure(let problem):
                refused.append(SyncReport.RefusedHead(version: VersionID(candidate.id), reference: candidate.reference, reason: problem.reason))
                listing.rejected.insert(candidate.id)
            case .success(let key):
                if candidate.legacy, !listing.isTruceStore { result.legacyReferences.append(candidate.reference) }
                // The listing holds each head manifests list once, before the head refs: only a head ref may name one
                // accepted before, so only what head refs name is remembered.
                if candidate.legacy {
                    guard listing.accepted.insert(candidate.id).inserted else { continue }
                } else if listing.candidates.headReferencesName(candidate.id) {
                    listing.accepted.insert(candidate.id)
                }
                // The first manifest to list a head is the one a later manifest of ours lists in its place.
                if let via = candidate.via { result.via[candidate.id] = via }
                if result.byKey[key] == nil { hidden += try localHeads.of(key) }
                result.byKey[key, default: []].append(candidate.id)
                admitted.append(candidate.id)
            }
        }
        if isLast, total > 0 { checking?(total, total) }
        // Anything refused: no copy moves and nothing counts as listed by a manifest, so the next sync reads it all
        // again. A batch adopted before a refusal keeps its `via`: a manifest it names that this store never takes is
        // no manifest a push of ours lists.
        if !refused.isEmpty {
            result.via = [:]
        } else if isLast {
            for (replica, manifest) in listing.newest.sorted(by: { $0.key < $1.key }) {
                result.manifests.append((ReplicaManifest.reference(of: replica), manifest.target, manifest.seen))
            }
            admitted += listing.manifestsRead
            checked.insert(contentsOf: listing.chainCommits)
        }
        // The last point a cancellation stops at before this store changes: the quarantine, and what it holds, goes.
        try cancellation?.check()
        // What this batch's checks read is all its heads bring unless one was refused partway. Only a sync in one
        // batch has checked all the download holds, which may then move in as it came.
        try listing.quarantine.admit(
            admitted, hiding: hidden, whenOnly: refused.count == refusedBefore ? checked : nil, isWhole: isLast && batch.startIndex == 0,
            progress: storing)
        return result
    }

    /// The checks of the heads of a first sync's `batch` that manifests listed, divided between this thread and a
    /// second with its own handle on the quarantine (`Quarantine.secondReader`), in `batch`'s order (nil for a head ref,
    /// checked after in order); nil when the batch is checked on this thread alone.
    ///
    /// While this store has no heads, a head's check reads only what the
    /// other side sent: the two halves of a batch share nothing but the
    /// packs read, each through its own handle. What each passed joins
    /// `checked` and `versions` after, the first half's first; the proofs the
    /// second thread's reads made are handed to the copy
    /// (`PackEntries.takeRemembered`). `checking` hears how many heads both
    /// have checked, from one of them, so the count only grows.
    private func headChecksOnTwoThreads(
        _ batch: Slice<IncomingCandidates>, of listing: inout IncomingListing, recording checked: inout CheckedObjects,
        versions: inout CheckedVersions, checking: ((Int, Int) -> Void)?
    ) -> [Result<DocumentKey, ReplicaManifest.ManifestProblem>?]? {
        guard !listing.storeHadHeads, batch.count >= instrumentation.fewestDividedOnTwoThreads,
            ProcessInfo.processInfo.activeProcessorCount > 1
        else { return nil }
        // A handle the checks cannot have is only a slower sync: the batch is checked here alone.
        if listing.secondReader == nil { listing.secondReader = try? listing.quarantine.secondReader() }
        guard let second = listing.secondReader else { return nil }
        final class Half {
            let reader: Repository
            let offsets: ArraySlice<Int>
            var checked = CheckedObjects()
            var versions = CheckedVersions()
            init(reader: Repository, offsets: ArraySlice<Int>) { (self.reader, self.offsets) = (reader, offsets) }
        }
        // In the order the other store's packs hold the heads (a version's objects lie together there): each thread
        // then reads one run of the packs, where the order listed sent both at random through them, and the pages each
        // let go were scattered (a TLB shootdown each, while two threads ran).
        let order =
            listing.quarantine.repository.directPackReads?.indicesInPackOrder(of: batch.map(\.id)) ?? Array(0..<batch.count)
        let middle = batch.count / 2
        nonisolated(unsafe) let halves = [
            Half(reader: listing.quarantine.repository, offsets: order[..<middle]), Half(reader: second, offsets: order[middle...]),
        ]
        // The listing kept the heads' commits in the first handle: the second half's go to the second, which would read
        // them again, and leave with its half's checks.
        second.takeKeptCommits(of: order[middle...].lazy.map { batch[batch.startIndex + $0].id }, from: listing.quarantine.repository)
        defer { second.forgetKeptCommits() }
        nonisolated(unsafe) let (engine, report) = (self, checking)
        let candidates = batch
        let total = listing.candidates.count, start = batch.startIndex
        let done = Atomic<Int>(0)
        var outcomes = [Result<DocumentKey, ReplicaManifest.ManifestProblem>?](repeating: nil, count: batch.count)
        outcomes.withUnsafeMutableBufferPointer { outcomes in
            // Each thread writes only the places of its half.
            nonisolated(unsafe) let outcomes = outcomes
            DispatchQueue.concurrentPerform(iterations: halves.count) { position in
                let half = halves[position]
                // No head here to read: the store has none.
                var localHeads = LocalHeads(in: engine, storeHasHeads: false)
                for (step, offset) in half.offsets.enumerated() {
                    let candidate = candidates[start + offset]
                    guard !candidate.legacy else { continue }
                    outcomes[offset] = engine.headCheckOrError(
                        candidate, from: half.reader, localHeads: &localHeads, recording: &half.checked, versions: &half.versions)
                    if position == 1 { engine.instrumentation.countHeadCheckedOnASecondThread() }
                    let checkedSoFar = done.add(1, ordering: .relaxed).newValue
                    if position == 0, step % 128 == 0 { report?(start + checkedSoFar, total) }
                }
            }
        }
        for half in halves {
            checked.insert(contentsOf: half.checked)
            // Taken from the half, so that the first half's become these without a copy.
            let taken = half.versions
            half.versions = CheckedVersions()
            versions.merge(taken)
        }
        if let reads = listing.quarantine.repository.directPackReads, let secondReads = second.directPackReads {
            reads.takeRemembered(from: secondReads)
        }
        checking?(start + done.load(ordering: .relaxed), total)
        return outcomes
    }

    /// `headCheck`, with a failure to read what the head brings (a missing or unreadable object) as its problem.
    private func headCheckOrError(
        _ candidate: IncomingCandidate, from incoming: Repository, localHeads: inout LocalHeads,
        recording checked: inout CheckedObjects, versions: inout CheckedVersions
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
        _ candidate: IncomingCandidate, from incoming: Repository, localHeads: inout LocalHeads,
        recording checked: inout CheckedObjects, versions: inout CheckedVersions
    )
        throws -> Result<DocumentKey, ReplicaManifest.ManifestProblem>
    {
        let id = candidate.id
        // No check reads a head's commits again once it is over: kept, they filled the cache to its limit in every
        // batch of a first sync (28 MB of its peak), where the listing's are the only ones read again.
        var read = [id]
        defer { for commit in read { incoming.forgetKeptCommit(commit) } }
        guard try incoming.rawCommitIfPresent(id) != nil else { return .failure(.init("it is not a commit")) }
        let commit = try incoming.readCommit(id)
        guard let message = VersionMessage(parsing: commit.message) else { return .failure(.init("it is not a Truce version")) }
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
        if try isComplete(id, below: hidden) { return .success(key) }
        // A first version's history is itself (most heads of a first sync): no walk to set up.
        let history = commit.parents.isEmpty ? [id] : try incoming.walk(from: [id], hiding: hidden)
        read = history
        for commit in history {
            let parsed = commit == id ? message : nil
            if let problem = try IncomingCheck.problem(of: commit, key: key, parsed: parsed, in: incoming, recording: &checked, versions: &versions) {
                return .failure(.init(commit == id ? "it \(problem)" : "its history does: version \(commit.short) \(problem)"))
            }
        }
        return .success(key)
    }

    /// Whether this store holds `id` with its whole history: it is one of the document's `heads` or in their history.
    ///
    /// As in git's fetch, holding the commit proves nothing: a sync killed before it adopted what it brought, then a
    /// prune killed while it deleted those unreachable objects, can leave the commit without its parents
    /// (`SyncTests.aStoreHoldingAnIncompleteCopyOfAHeadStillAdoptsIt`).
    private func isComplete(_ id: ObjectID, below heads: [ObjectID]) throws -> Bool {
        if heads.contains(id) { return true }
        guard !heads.isEmpty, try repository.containsObjectWithoutRescan(id) else { return false }
        // Comparing reads the history of `id` too: a parent missing there says it is no complete copy.
        return (try? heads.contains { try repository.isDescendant($0, of: id) }) ?? false
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
    /// `parsed` is the commit's message when the caller has parsed it already (a head's own commit).
    static func problem(
        of id: ObjectID, key: DocumentKey, parsed: VersionMessage? = nil, in repository: Repository, recording checked: inout CheckedObjects,
        versions: inout CheckedVersions
    ) throws -> String? {
        guard let raw = try repository.rawCommit(id) else { return "is not a commit" }
        if let problem = commitHeaderProblem(raw) { return "is a commit git fsck refuses: \(problem)" }
        let commit = try repository.readCommit(id)
        guard let message = parsed ?? VersionMessage(parsing: commit.message) else { return "is not a Truce version" }
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
            checked.insert(contentsOf: objects + chain.trees + [chain.blob])
            versions.record(StoreEngine.version(of: commit, message: message, key: key, isDeletion: false))
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
        checked.insert(contentsOf: objects)
        versions.record(StoreEngine.version(of: commit, message: message, key: key, isDeletion: entry == nil))
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
