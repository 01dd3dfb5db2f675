import Foundation
internal import TruceGit

extension DocumentStore {
    /// Writes `content` as a new version of `key` and returns it.
    ///
    /// The new version's parent is `base`, or the current version when `base`
    /// is nil. When `base` is no longer a head because another writer saved
    /// meanwhile, the new version lands beside that writer's and the document
    /// is in conflict: neither is lost.
    @discardableResult
    public func save(_ content: Data, to key: DocumentKey, device: String? = nil, base: VersionID? = nil, date: Date = Date()) throws(TruceError)
        -> Version
    {
        try write(content, to: key, device: device, base: base, date: date)
    }

    /// Writes a deletion: a version whose tree lacks the key.
    @discardableResult
    public func delete(_ key: DocumentKey, device: String? = nil, base: VersionID? = nil, date: Date = Date()) throws(TruceError) -> Version {
        try write(nil, to: key, device: device, base: base, date: date)
    }

    private func write(_ content: Data?, to key: DocumentKey, device: String?, base: VersionID?, date: Date) throws(TruceError) -> Version {
        let author = try author(device)
        try Signature.checkRepresentable(date)
        let version = { (transaction: inout WriteTransaction) throws -> Version in
            try Self.writeVersion(content, to: key, base: base, author: author, date: date, in: &transaction)
        }
        // Small saves go through the save log when the store has it on: large ones would sit whole in its memory.
        if (content?.count ?? 0) <= PendingSaves.largestLoggedContent,
            let logged = try withPendingSaves({ pending in
                var transaction = try WriteTransaction(in: pending.writer.repository, objects: .logged(pending))
                return try version(&transaction)
            })
        {
            return logged
        }
        return try transacting(.packed, version)
    }

    /// Stages and commits the version `write` makes, in `transaction`.
    private static func writeVersion(
        _ content: Data?, to key: DocumentKey, base: VersionID?, author: String, date: Date, in transaction: inout WriteTransaction
    ) throws -> Version {
        let repository = transaction.repository
        let before = try transaction.versions(of: key)
        let parent: Version?
        if let base {
            guard try repository.containsCommit(base.objectID) else { throw TruceError.versionNotFound(base.hex) }
            parent = try Self.readVersion(base, of: key, in: repository)
        } else {
            parent = before.current
        }
        if content == nil {
            guard let parent else { throw TruceError.documentNotFound(key) }
            if parent.isDeletion { throw TruceError.alreadyDeleted(key, version: parent.id) }
        }
        let kind: VersionMessage.Kind = content == nil ? .delete : .save
        let message = VersionMessage(kind: kind, key: key.rawValue, device: author)
        let tree = try transaction.writeTree(holding: content, at: key)
        let signature = Signature(device: author, date: date)
        let committer = Signature(device: author, date: Date())
        let parents = try parent.map { try Self.parents(basedOn: $0, heads: before, in: repository) } ?? []
        let id = try transaction.writeVersion(tree: tree, parents: parents, author: signature, committer: committer, message: message.text)
        transaction.publish(PendingHead(key: key, id: id, replacing: parents, message: "truce: \(kind.rawValue.lowercased()) \(key.rawValue)"))
        transaction.record(Change(kind: content == nil ? .delete : .save, key: key, version: id, author: author, date: date))
        return try transaction.commit().version(id, of: key)
    }

    /// The parents of a version based on `base`: `base`, then every other head holding the same content.
    ///
    /// Heads with identical content count as one, so a save based on any of
    /// them supersedes them all, here and on every replica it syncs to.
    static func parents(basedOn base: Version, heads: DocumentVersions, in repository: Repository) throws -> [VersionID] {
        let others = heads.allHeads.filter { $0.id != base.id }
        guard !others.isEmpty, heads.allHeads.contains(where: { $0.id == base.id }) else { return [base.id] }
        let tree = try repository.readCommit(base.id.objectID).tree
        return try [base.id] + others.filter { try repository.readCommit($0.id.objectID).tree == tree }.map(\.id)
    }

    /// Writes the chain of trees that holds `content` at `key`, or an empty tree for a deletion.
    ///
    /// With `bulk`, every object written is recorded for its pack.
    static func writeTree(holding content: Data?, at key: DocumentKey, in repository: Repository, recording bulk: BulkWriter? = nil) throws
        -> ObjectID
    {
        try writeTree(
            holding: content, at: key,
            blob: { content in
                let id = try repository.writeBlob(content)
                bulk?.record(id)
                return id
            },
            tree: { entries in
                let id = try repository.writeTree(entries)
                bulk?.record(id)
                return id
            })
    }

    /// The chain of trees that holds `content` at `key` (an empty tree for a deletion), written by `blob` and `tree`.
    static func writeTree(
        holding content: Data?, at key: DocumentKey, blob: (Data) throws -> ObjectID, tree: ([TreeEntry]) throws -> ObjectID
    ) throws -> ObjectID {
        guard let content else { return try tree([]) }
        var segments = key.segments
        let leaf = String(segments.removeLast())
        var id = try tree([TreeEntry(name: leaf, id: try blob(content), isTree: false)])
        for segment in segments.reversed() {
            id = try tree([TreeEntry(name: String(segment), id: id, isTree: true)])
        }
        return id
    }

    /// A device name git accepts as an author name, or a clear error.
    static func authorName(_ device: String) throws(TruceError) -> String {
        // Foundation's trimming costs more than the rest of a logged save's checks: only when there is something to trim.
        let outer = [device.unicodeScalars.first, device.unicodeScalars.last].compactMap { $0 }
        let trimmed = outer.contains(where: CharacterSet.whitespaces.contains) ? device.trimmingCharacters(in: .whitespaces) : device
        if trimmed.isEmpty { throw .invalidDeviceName(device, reason: "it is empty") }
        if trimmed.utf8.count > 256 { throw .invalidDeviceName(device, reason: "it is longer than 256 bytes") }
        if trimmed.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw .invalidDeviceName(device, reason: "it contains a control character")
        }
        // By scalar: `String.contains` would miss a '<' that a combining mark follows (one grapheme).
        if trimmed.unicodeScalars.contains(where: { $0 == "<" || $0 == ">" }) {
            throw .invalidDeviceName(device, reason: "git forbids '<' and '>' in author names")
        }
        return trimmed
    }
}

extension Signature {
    /// The dates libgit2 writes exactly: it prints a signature's time as an unsigned 32-bit number of seconds,
    /// so an earlier or later date would wrap (1900 would be stored as 2036 and win "current").
    static let representableDates = Date(timeIntervalSince1970: 0)...Date(timeIntervalSince1970: TimeInterval(UInt32.max))

    /// `date`, when git can store it exactly; a clear error otherwise.
    static func checkRepresentable(_ date: Date) throws(TruceError) {
        // Stored to the second, rounded down, as `init(device:date:)` does.
        let seconds = date.timeIntervalSince1970.rounded(.down)
        guard seconds >= 0, seconds <= Double(UInt32.max) else { throw .dateOutOfRange(date) }
    }

    /// The author line of a device: its name, a made-up address git requires (`laptop@truce`), the date to the second in UTC.
    init(device: String, date: Date) {
        var slug = String.UnicodeScalarView()
        for scalar in device.lowercased().unicodeScalars {
            // ASCII first: CharacterSet's lookup is most of a logged save's cost of making its signature.
            let kept = scalar.isASCII ? (("a"..."z").contains(scalar) || ("0"..."9").contains(scalar)) : CharacterSet.alphanumerics.contains(scalar)
            slug.append(kept ? scalar : "-")
        }
        self.init(name: device, email: String(slug) + "@truce", time: Int64(date.timeIntervalSince1970.rounded(.down)), offsetMinutes: 0)
    }
}
