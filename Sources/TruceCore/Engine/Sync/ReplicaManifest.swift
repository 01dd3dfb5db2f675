import Foundation
internal import TruceGit

/// A replica's heads as git history a hub can hold: how sync learns what changed without listing every head.
///
/// Each replica keeps one reference, `refs/truce/replicas/<replica id>`, on
/// every hub it syncs with, so a hub advertises one ref per replica whatever
/// the store holds. It points at a chain of manifest commits with an empty
/// tree: the first parent is the replica's previous manifest, the others are
/// the heads of the documents that changed here since, and the manifests of
/// other replicas that received documents came through (so adopting a whole
/// hub lists one commit). A snapshot has no previous manifest and lists every
/// known replica's manifest and every head none of them lists; one is
/// written when the chain since the last one lists four times what that
/// snapshot did. Because the heads are parents, git reaches and transfers
/// them like any history, and the chain gives git's negotiation common
/// history to find: only new objects travel. A reader learns what is new by
/// walking back to the manifest it saw last.
enum ReplicaManifest {
    static let root = "refs/truce/replicas/"

    /// What a manifest commit records beside its parents.
    struct Header: Equatable {
        let replica: String
        /// One more than the previous manifest's: which of two manifests of a replica is newer.
        let sequence: Int
        /// The change-journal entry this manifest covers: the next one lists the documents changed after it.
        let journal: ObjectID?
        let isSnapshot: Bool
        /// Heads the manifests after the last snapshot listed, this one's included.
        let listedSinceSnapshot: Int
        /// Heads the last snapshot listed.
        let snapshotHeads: Int
    }

    static func reference(of replica: String) -> String { root + replica }

    /// The most parents a manifest commit has: more are grouped into part commits of at most this many.
    ///
    /// libgit2's history walks keep their queue as a list sorted by date, so
    /// one commit with 10,000 parents costs every walk that meets it (every
    /// fetch's negotiation, every push) time that grows with the square of that.
    static let fanOut = 64

    /// The signature of a part that lists heads dated `times`: a second older than the oldest of them.
    ///
    /// libgit2's walks take commits newest first from one list kept sorted by
    /// committer time, inserting each behind every commit as new or newer: a
    /// linear scan. A part as new as its manifest is taken up before any head,
    /// so a walk that reads the whole snapshot (the push of a new store's first
    /// manifest, prune's repack) piled up every head in that list, and heads
    /// saved in the same few seconds (an import) made each insert scan them
    /// all: O(n²), minutes at 100,000 heads. A part older than what it lists is
    /// taken up after them: its heads come in ahead of the remaining parts and
    /// leave at once, and the list stays short. Hiding stays exact: the parts
    /// above these (and a manifest) keep their own time, so reading them marks
    /// every listed head hidden before the walk reaches the heads, as before;
    /// a walk that hides a manifest then stops without taking up these parts.
    /// Not epoch 0: a manifest's own new parts would be the oldest commits of
    /// the walk that pushes them, which would then read all the history it
    /// hides before it stops. The time comes from what is listed (`times`, the
    /// committer times of the heads it lists), so a part has the same id
    /// wherever it is written.
    static func partSignature(listing times: ArraySlice<Int64>) -> Signature {
        let oldest = times.min() ?? 0
        // git's dates start at 0: a part of versions dated 1970 can only be as old as they are.
        return Signature(name: "truce", email: "manifest@truce", time: max(0, oldest - 1), offsetMinutes: 0)
    }

    static func partMessage(of replica: String) -> String {
        "Manifest part\n\nReplica: \(replica)\nPart: yes\n"
    }

    /// Whether `message` has a line that starts `Replica: `, as every manifest's and part's has (`header(parsing:)`
    /// and `isPart` need one): a version's message is told apart without reading its trailers.
    static func hasReplicaLine(_ message: String) -> Bool {
        var message = message
        return message.withUTF8 { hasReplicaLine(in: UnsafeRawBufferPointer($0)) }
    }

    /// `hasReplicaLine` of the message of a commit as stored: what follows the header's end, its first empty line
    /// (libgit2 reads the message from there too). A commit without one has no message.
    static func messageHasReplicaLine(rawCommit raw: [UInt8]) -> Bool {
        raw.withUnsafeBytes { bytes in
            guard let base = bytes.baseAddress else { return false }
            var start = 0
            while let newline = memchr(base + start, 0x0A, bytes.count - start) {
                let next = base.distance(to: UnsafeRawPointer(newline)) + 1
                if next == start + 1 { return hasReplicaLine(in: UnsafeRawBufferPointer(rebasing: bytes[next...])) }
                start = next
            }
            return false
        }
    }

    static func hasReplicaLine(in bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return false }
        let marker: StaticString = "Replica: "
        var start = 0
        while bytes.count - start >= marker.utf8CodeUnitCount {
            if memcmp(base + start, marker.utf8Start, marker.utf8CodeUnitCount) == 0 { return true }
            guard let newline = memchr(base + start, 0x0A, bytes.count - start) else { return false }
            start = base.distance(to: UnsafeRawPointer(newline)) + 1
        }
        return false
    }

    /// True for a commit message of a part that a manifest of `replica` lists.
    static func isPart(_ message: String, of replica: String) -> Bool {
        Array(message.utf8) == Array(partMessage(of: replica).utf8)
    }

    /// The replica a manifest reference names, nil unless the name is `refs/truce/replicas/<32 lowercase hex>`.
    static func replica(ofReference name: String) -> String? {
        guard name.hasPrefix(root) else { return nil }
        let id = String(name.dropFirst(root.count))
        return isReplicaID(id) ? id : nil
    }

    static func isReplicaID(_ text: String) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    /// The message of a manifest with `header`; `title` is its first line, which no reader parses (a hub's index has its
    /// own, for `git log`).
    static func message(_ header: Header, title: String = "Manifest") -> String {
        """
        \(title)

        Replica: \(header.replica)
        Sequence: \(header.sequence)
        Journal: \(header.journal?.hex ?? "none")
        Snapshot: \(header.isSnapshot ? "yes" : "no")
        Listed: \(header.listedSinceSnapshot)
        Snapshot-Heads: \(header.snapshotHeads)

        """
    }

    /// The header of a manifest commit's message; nil when it is not one.
    static func header(parsing message: String) -> Header? {
        let fields = MessageLines.trailers(of: message)
        guard let replica = fields["Replica"], isReplicaID(replica), let sequence = fields["Sequence"].flatMap({ Int($0) }),
            let journalText = fields["Journal"], let snapshot = fields["Snapshot"], snapshot == "yes" || snapshot == "no",
            let listed = fields["Listed"].flatMap({ Int($0) }), let snapshotHeads = fields["Snapshot-Heads"].flatMap({ Int($0) })
        else { return nil }
        let journal = journalText == "none" ? nil : ObjectID(hex: journalText)
        guard journalText == "none" || journal != nil else { return nil }
        return Header(
            replica: replica, sequence: sequence, journal: journal, isSnapshot: snapshot == "yes",
            listedSinceSnapshot: listed, snapshotHeads: snapshotHeads)
    }

    /// What a manifest chain lists: heads, and manifests of other replicas whose listings it takes over.
    struct Listing {
        var heads: [ObjectID] = []
        var manifests: [(replica: String, id: ObjectID)] = []
        /// The commits of the chain read (manifests and their parts), each with a header git fsck takes.
        var commits: [ObjectID] = []
        /// True when the walk ended at a snapshot, not at the manifest seen: the listing is then all the chain lists.
        var reachedSnapshot = false
    }

    /// What the chain from `tip` lists after `seen` (back to a snapshot when `seen` is not on it), in the order listed;
    /// fails with a reason when a commit of the chain is not a manifest of `replica`.
    ///
    /// A listed parent that is itself a manifest stands for everything its own
    /// chain lists: a replica lists the manifests it adopted from instead of
    /// the heads they brought, so a new replica's first manifest is one commit,
    /// not one parent per document.
    static func listing(from tip: ObjectID, after seen: ObjectID?, replica: String, in repository: Repository) throws
        -> Result<Listing, ManifestProblem>
    {
        var listing = Listing()
        var current: ObjectID? = tip
        while let id = current, id != seen {
            // Kept while there is room, as the heads below are: a chain's commits do not push out the first heads read.
            guard let raw = try repository.rawCommitIfPresentKeepingWhileRoom(id) ?? repository.rawCommit(id) else {
                return .failure(ManifestProblem("\(id.short) is not a commit"))
            }
            if let problem = commitHeaderProblem(raw) { return .failure(ManifestProblem("\(id.short) is a commit git fsck refuses: \(problem)")) }
            let commit = try repository.readCommit(id)
            guard let header = header(parsing: commit.message), header.replica == replica else {
                return .failure(ManifestProblem("\(id.short) is not a manifest of replica \(replica)"))
            }
            listing.commits.append(id)
            var listed = Array((header.isSnapshot ? commit.parents[...] : commit.parents.dropFirst()).reversed())
            let ahead = readAhead(listed.reversed(), of: replica, in: repository)
            while let parent = listed.popLast() {
                // A head that did not arrive is listed all the same: the head checks refuse it by name. Nearly every
                // commit listed is a version, read here only for the line that tells it apart: the checks read it
                // again, and find the first ones read here still kept.
                let raw: [UInt8]?
                if let ahead, !ahead.unread.contains(parent) {
                    // Read ahead, where only the commits with that line were held on to.
                    guard let selected = ahead.selected[parent] else {
                        listing.heads.append(parent)
                        continue
                    }
                    raw = selected
                } else {
                    raw = try repository.rawCommitIfPresentKeepingWhileRoom(parent)
                }
                let mayList = raw.map(messageHasReplicaLine(rawCommit:)) ?? false
                let listedCommit = mayList ? try repository.readCommit(parent) : nil
                if mayList, let listedCommit, isPart(listedCommit.message, of: replica) {
                    guard let raw, commitHeaderProblem(raw) == nil else {
                        return .failure(ManifestProblem("part \(parent.short) of \(id.short) is a commit git fsck refuses"))
                    }
                    listing.commits.append(parent)
                    listed += listedCommit.parents.reversed()
                } else if mayList, let listedCommit, let nested = Self.header(parsing: listedCommit.message) {
                    listing.manifests.append((nested.replica, parent))
                } else {
                    listing.heads.append(parent)
                }
            }
            if header.isSnapshot {
                listing.reachedSnapshot = true
                break
            }
            guard let previous = commit.parents.first else { return .failure(ManifestProblem("\(id.short) lists heads but no previous manifest")) }
            current = previous
        }
        return .success(listing)
    }

    /// Reads ahead what the walk of one manifest commit above would read one commit at a time: `parents`, the commit's,
    /// then the parents of those that are parts of it, a level at a time, each level in the order the packs hold it and
    /// on two threads when large (`Repository.readCommitsAhead`), keeping the commits for the checks while there is
    /// room. Returns the bytes of those whose message has a replica line (parts, and the manifests listed) and the
    /// ids the packs did not give; nil when the repository reads no packs in place.
    ///
    /// The walk meets only commits met here: a commit is a part here exactly when it is one there (the same bytes,
    /// told apart the same way; one the packs did not give is read here as the walk reads it), and here each part's
    /// parents are visited once it is found.
    private static func readAhead(_ parents: [ObjectID], of replica: String, in repository: Repository) -> Repository.CommitsReadAhead? {
        var level = parents, ahead = Repository.CommitsReadAhead()
        // Each part descended into once: parts that list one part twice would otherwise double a level each time.
        var descended = Set<ObjectID>()
        while !level.isEmpty {
            guard let read = repository.readCommitsAhead(level, selecting: messageHasReplicaLine(rawCommit:)) else { return nil }
            var next: [ObjectID] = []
            for id in level {
                let raw = read.unread.contains(id) ? (try? repository.rawCommitIfPresentKeepingWhileRoom(id)) ?? nil : read.selected[id]
                guard let raw, messageHasReplicaLine(rawCommit: raw), let commit = try? repository.readCommit(id),
                    isPart(commit.message, of: replica), descended.insert(id).inserted
                else { continue }
                next += commit.parents
            }
            ahead.selected.merge(read.selected) { first, _ in first }
            ahead.unread.formUnion(read.unread)
            level = next
        }
        return ahead
    }

    /// Every head the chains of `manifests` list, through the manifests they list in turn, back to their snapshots.
    static func headsListed(byAll manifests: [ObjectID], in repository: Repository) throws -> Set<ObjectID> {
        var heads = Set<ObjectID>(), visited = Set<ObjectID>(), pending = manifests
        while let manifest = pending.popLast() {
            guard visited.insert(manifest).inserted, let header = header(parsing: try repository.readCommit(manifest).message),
                case .success(let listing) = try listing(from: manifest, after: nil, replica: header.replica, in: repository)
            else { continue }
            heads.formUnion(listing.heads)
            pending += listing.manifests.map(\.id)
        }
        return heads
    }

    /// Why a replica's manifest chain was refused.
    struct ManifestProblem: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }
}
