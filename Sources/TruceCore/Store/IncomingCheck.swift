import Foundation

/// A head another store advertised that this store refused, and why.
public struct RefusedHead: Sendable, Codable, Equatable {
    /// The version the head names.
    public let version: VersionID
    /// The reference the other store advertised it under.
    public let reference: String
    /// What is wrong with it or with the history it brings, in words.
    public let reason: String
}

extension DocumentStore {
    /// Fetches the other store's heads into a quarantine, checks what each brings, admits the good ones' objects
    /// into this store, and returns them by head directory; the bad ones go into `refused`.
    ///
    /// A head is refused when any commit of the history it brings fails the
    /// checks of `incomingProblem`; the others are adopted as if it had not
    /// been advertised. Nothing of a refused head stays in the store.
    static func fetchChecked(from remote: String, into repository: Repository, refused: inout [RefusedHead],
                             progress: ((TransferCounts) -> Void)? = nil) throws -> [String: [ObjectID]] {
        let quarantine = try Quarantine(of: repository)
        let incoming = quarantine.repository
        let advertised: [(name: String, target: ObjectID)]
        do throws(GitError) {
            if let path = localPath(of: remote) {
                advertised = try quarantine.borrowObjects(of: path, refsMatching: ReferenceLayout.allHeads)
            } else {
                advertised = try incoming.fetch(from: remote, refsMatching: ReferenceLayout.allHeads, progress: progress)
            }
        } catch where error.message.contains(repository.gitDirectory) {
            // libgit2 names the file it failed to write: a file of this store (a full disk, say) is this store failing.
            throw TruceError.storeFailure(error)
        } catch {
            throw TruceError.invalidRemote(remote, reason: error.message)
        }
        var accepted: [String: [ObjectID]] = [:]
        var admitted: [ObjectID] = [], hidden: [ObjectID] = []
        for reference in advertised {
            if let problem = headProblemOrError(reference, into: repository, from: incoming) {
                refused.append(RefusedHead(version: reference.target, reference: reference.name, reason: problem))
                continue
            }
            let directory = ReferenceLayout.headsDirectory(ofReference: reference.name, target: reference.target)!
            accepted[directory, default: []].append(reference.target)
            admitted.append(reference.target)
            hidden += try headReferences(ofDirectory: directory, in: repository)
        }
        try quarantine.admit(admitted, hiding: hidden)
        return accepted
    }

    /// `headProblem`, with a failure to read what the head brings (a missing or unreadable object) as its problem.
    private static func headProblemOrError(_ reference: (name: String, target: ObjectID), into repository: Repository,
                                           from incoming: Repository) -> String? {
        do {
            return try headProblem(reference, into: repository, from: incoming)
        } catch let error as TruceError {
            return error.errorDescription ?? "\(error)"
        } catch {
            return "\(error)"
        }
    }

    /// What is wrong with a head another store advertised and the history it brings, nil when nothing.
    private static func headProblem(_ reference: (name: String, target: ObjectID), into repository: Repository, from incoming: Repository) throws -> String? {
        guard let directory = ReferenceLayout.headsDirectory(ofReference: reference.name, target: reference.target) else {
            return "it is not a head reference Truce writes (refs/truce/heads/<2 hex>/<38 hex>/<its version id>)"
        }
        guard let message = VersionMessage(parsing: try incoming.readCommit(reference.target).message) else { return "it is not a Truce version" }
        let key = try DocumentKey(message.key)
        guard ReferenceLayout.headsDirectory(of: key) == directory else {
            return "it names \(TruceError.quoted(key.rawValue)), whose heads live elsewhere"
        }
        for id in try incoming.walk(from: [reference.target], hiding: try headReferences(ofDirectory: directory, in: repository)) {
            if let problem = try incomingProblem(of: id, key: key, in: incoming) {
                return id == reference.target ? "it \(problem)" : "its history does: version \(id.short) \(problem)"
            }
        }
        return nil
    }

    /// The targets of the head references in one document's directory.
    private static func headReferences(ofDirectory directory: String, in repository: Repository) throws -> [ObjectID] {
        try repository.references(matching: directory + "*").map(\.target)
    }

    /// What is wrong with a commit another store sent as a version of `key`, nil when nothing.
    ///
    /// git's own checks of the commit header, then Truce's layout: a Truce
    /// version message naming `key`, and a tree that holds exactly the
    /// document at its key (one entry per level, a blob of mode 100644 at the
    /// end, canonical bytes) or, for a deletion, nothing. Tree entry names are
    /// then the key's segments, which key validation and libgit2's own entry
    /// checks (what a local save runs into) have passed.
    static func incomingProblem(of id: VersionID, key: DocumentKey, in repository: Repository) throws -> String? {
        guard let raw = try repository.rawCommit(id) else { return "is not a commit" }
        if let problem = commitHeaderProblem(raw) { return "is a commit git fsck refuses: \(problem)" }
        let commit = try repository.readCommit(id)
        guard let message = VersionMessage(parsing: commit.message) else { return "is not a Truce version" }
        guard Array(message.key.utf8) == Array(key.rawValue.utf8) else {
            return "is a version of \(TruceError.quoted(message.key)), not of \(TruceError.quoted(key.rawValue))"
        }
        var expected = ObjectID.emptyTree
        if let entry = try repository.entry(at: key.rawValue, inTree: commit.tree) {
            guard !entry.isTree, try repository.containsBlob(entry.id) else { return "holds no file at its key" }
            var segments = key.segments.map(String.init)
            let leaf = segments.removeLast()
            if let problem = repository.treeEntryNameProblem(leaf, id: entry.id, isTree: false) { return "has a tree entry git refuses: \(problem)" }
            expected = ObjectID.treeHash(ofEntry: leaf, id: entry.id, isTree: false)
            for segment in segments.reversed() {
                if let problem = repository.treeEntryNameProblem(segment, id: expected, isTree: true) { return "has a tree entry git refuses: \(problem)" }
                expected = ObjectID.treeHash(ofEntry: segment, id: expected, isTree: true)
            }
        }
        guard commit.tree == expected else {
            return "has a tree that holds more than its document at its key (or not in git's canonical form)"
        }
        return nil
    }
}
