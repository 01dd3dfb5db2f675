import Foundation
internal import TruceGit

/// The change journal: a chain of commits on `refs/truce/journal`, one per change, that `git log` reads.
///
///     save notes/todo.md
///
///     Change: save
///     Document: notes/todo.md
///     Version: 5d2a2208fa4e7ac627d0125bd30c5d874001e666
///     Device: laptop
///
/// Entries hold version ids as text, not as parents, so the journal keeps no
/// version alive: prune decides that from the heads alone.
///
/// Many changes recorded at once (a sync, a batch, `resolve --all`) are one
/// entry instead, titled `journal N changes`, whose tree holds a file
/// `changes` with one line per change (`git show refs/truce/journal:changes`):
/// kind, version, author date in seconds, the manifest it came through (or
/// `-`), device and document, separated by tabs (neither keys nor device
/// names may hold a tab or a newline). Ten thousand entries would cost ten
/// thousand commits to write and pack; one costs one. When every change of
/// the batch came through a manifest, a `Via:` trailer names those manifests.
struct ChangeJournal {
    static let reference = "refs/truce/journal"

    /// The repository whose journal this is.
    let repository: Repository

    /// Appends `changes` in order, retrying when another writer appended first.
    ///
    /// `via` names, for a version a sync received, the replica manifest that listed it: this replica's next
    /// manifest lists that manifest instead of the version's document.
    func append(_ changes: [Change], via: [VersionID: ObjectID] = [:]) throws {
        guard !changes.isEmpty else { return }
        for _ in 0..<50 {
            // The entries go into one pack, fsynced with its directory, rather than loose objects: fewer fsyncs, and
            // libgit2 would not fsync the `objects/` directory a new loose object's folder is made in.
            let staging = ObjectStaging()
            let prepared = try prepare(changes, via: via, into: staging)
            // Deflated fast: a batch file is read back only by `changes --since` and prune.
            try staging.flush(into: repository, compression: .fastest)
            if try publish(prepared) { return }
            // Another writer appended meanwhile: chain onto its entry.
        }
        throw TruceError.busy("the change journal kept moving while appending")
    }

    /// Entries written but not yet in the journal: the chain's newest entry and the journal tip it was built on.
    struct Prepared {
        let entry: ObjectID
        let onto: ObjectID?
        let count: Int
    }

    /// Stages the entries for `changes` chained onto the journal's current tip, without moving the journal: in the same
    /// pack as the versions they record, when `staging` is a write's.
    func prepare(_ changes: [Change], via: [VersionID: ObjectID] = [:], into staging: ObjectStaging) throws -> Prepared {
        precondition(!changes.isEmpty, "a journal entry needs a change")
        let tip = try repository.reference(Self.reference)
        if changes.count > Self.batchThreshold {
            let blob = staging.writeBlob(Self.batchLines(changes, via: via))
            let tree = staging.writeTree([TreeEntry(name: Self.batchFile, id: blob, isTree: false)])
            let author = changes[0].author, now = Date()
            // When every change came through a manifest, the message names them: what a replica's first manifest asks of
            // the journal, answered without reading the file.
            let manifests = changes.allSatisfy { via[$0.version] != nil } ? Set(changes.compactMap { via[$0.version] }).sorted() : []
            let through = manifests.isEmpty ? "" : "Via: \(manifests.map(\.hex).joined(separator: " "))\n"
            let entry = try staging.writeCommit(
                tree: tree, parents: tip.map { [$0] } ?? [], author: Signature(device: author, date: now),
                committer: Signature(device: author, date: now),
                message: "journal \(changes.count) changes\n\nChange: batch\nChanges: \(changes.count)\n\(through)")
            return Prepared(entry: entry, onto: tip, count: changes.count)
        }
        let emptyTree = staging.writeTree([])
        var parent = tip
        for change in changes {
            parent = try staging.writeCommit(
                tree: emptyTree, parents: parent.map { [$0] } ?? [], author: Signature(device: change.author, date: change.date),
                committer: Signature(device: change.author, date: Date()), message: Self.message(for: change, via: via[change.version]))
        }
        return Prepared(entry: parent!, onto: tip, count: changes.count)
    }

    /// Moves the journal to `prepared` if it is still where `prepared` was built; false when another writer moved it.
    func publish(_ prepared: Prepared) throws -> Bool {
        do {
            try repository.withLockRetries(on: Self.reference) {
                try repository.updateReference(
                    Self.reference, to: prepared.entry, expecting: prepared.onto,
                    message: "truce: journal \(prepared.count) change(s)")
            }
            return true
        } catch let error as GitError where error.isConcurrentModification {
            return false
        }
    }

    /// The changes recorded after `position` up to `tip`, oldest first; nil when `position` is not below `tip`.
    ///
    /// Walks back from `tip`, so the cost follows the number of entries after `position`.
    func changes(from tip: ObjectID, after position: ObjectID?) throws -> [Change]? {
        try entries(from: tip, after: position)?.map(\.change)
    }

    /// The changes recorded after `position` up to `tip`, one list per entry, oldest first; nil when `position` is not
    /// below `tip`.
    func changesByEntry(from tip: ObjectID, after position: ObjectID?) throws -> [[Change]]? {
        var entries: [[Change]] = []
        let reached = try walk(from: tip, after: position) { commit in
            entries.append(try changes(recordedBy: commit).map(\.change))
            return true
        }
        return reached ? entries.reversed() : nil
    }

    /// `changes(from:after:in:)` with the manifest each received version came through (`Via:`).
    func entries(from tip: ObjectID, after position: ObjectID?) throws -> [(change: Change, via: ObjectID?)]? {
        var entries: [(change: Change, via: ObjectID?)] = []
        let reached = try walk(from: tip, after: position) { commit in
            entries.append(contentsOf: try changes(recordedBy: commit).reversed())
            return true
        }
        return reached ? entries.reversed() : nil
    }

    /// The manifests that the changes the journal records from `tip` back to its start came through, when every change
    /// came through one that `isAmong` accepts; nil when one did not (a save here, a version from elsewhere). A batch
    /// entry's `Via:` answers for all its changes, and only an entry without one is read line by line.
    func manifests(from tip: ObjectID, where isAmong: (ObjectID) throws -> Bool) throws -> Set<ObjectID>? {
        var through = Set<ObjectID>()
        var every = true
        _ = try walk(from: tip, after: nil) { commit in
            let trailers = MessageLines.trailers(of: commit.message)
            let vias: [ObjectID?]
            if trailers["Change"] == "batch", let listed = trailers["Via"] {
                vias = listed.split(separator: " ").map { ObjectID(hex: String($0)) }
                every = !vias.isEmpty
            } else {
                vias = try changes(recordedBy: commit).map(\.via)
            }
            every = try every && vias.allSatisfy { try $0.map(isAmong) ?? false }
            if every { through.formUnion(vias.compactMap { $0 }) }
            return every
        }
        return every ? through : nil
    }

    /// Visits the entries from `tip` back to `position` (not included), newest first, while `visit` says go on;
    /// true when the walk reached `position` (for nil, the journal's start).
    private func walk(
        from tip: ObjectID, after position: ObjectID?, _ visit: (CommitRecord) throws -> Bool
    ) throws -> Bool {
        var entry: ObjectID? = tip
        while let current = entry {
            if current == position { return true }
            let commit = try repository.readCommit(current)
            guard try visit(commit) else { return false }
            entry = commit.parents.first
        }
        return position == nil
    }

    /// The changes an entry records; a commit in the journal that is no entry is a damaged journal.
    private func changes(recordedBy commit: CommitRecord) throws -> [(change: Change, via: ObjectID?)] {
        guard let recorded = try recorded(in: commit) else {
            throw TruceError.storeFailure(
                TruceError.StoreFailure(operation: "read change journal", message: "entry \(commit.id) is not a change"))
        }
        return recorded
    }

    /// More changes than this at once are one batch entry.
    static let batchThreshold = 16
    static let batchFile = "changes"

    /// The changes one entry records, in order, each with the manifest it came through; nil when the commit is no entry.
    func recorded(in entry: CommitRecord) throws -> [(change: Change, via: ObjectID?)]? {
        if let single = Self.entry(from: entry) { return [single] }
        guard MessageLines.trailers(of: entry.message)["Change"] == "batch",
            let file = try repository.entry(at: Self.batchFile, inTree: entry.tree), !file.isTree
        else { return nil }
        return Self.parseBatch(try repository.readBlob(file.id))
    }

    /// One line per change: kind, version, author date (seconds), manifest or `-`, device, key, separated by tabs.
    static func batchLines(_ changes: [Change], via: [VersionID: ObjectID]) -> Data {
        // Appended field by field into one buffer: an array of strings joined per line cost more than the lines.
        var text: [UInt8] = []
        text.reserveCapacity(changes.count * 160)
        for change in changes {
            text.append(contentsOf: change.kind.rawValue.utf8)
            text.append(0x09)
            text.append(contentsOf: change.version.hex.utf8)
            text.append(0x09)
            text.append(contentsOf: String(Int64(change.date.timeIntervalSince1970.rounded(.down))).utf8)
            text.append(0x09)
            text.append(contentsOf: (via[change.version]?.hex ?? "-").utf8)
            text.append(0x09)
            text.append(contentsOf: change.author.utf8)
            text.append(0x09)
            text.append(contentsOf: change.key.rawValue.utf8)
            text.append(0x0A)
        }
        return Data(text)
    }

    /// The changes of a batch file; nil when a line is not one (the entry is then not one Truce wrote).
    ///
    /// Read in place, field by field: prune reads every batch of the journal, and splitting each file into lines and
    /// each line into strings took longer than reading the files.
    static func parseBatch(_ data: Data) -> [(change: Change, via: ObjectID?)]? {
        data.withUnsafeBytes { buffer -> [(change: Change, via: ObjectID?)]? in
            let bytes = buffer.bindMemory(to: UInt8.self)
            var changes: [(change: Change, via: ObjectID?)] = []
            var start = 0
            while start < bytes.count {
                let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
                defer { start = end + 1 }
                guard end > start else { continue }
                // By bytes: a key is UTF-8 that may hold anything but control characters, so it splits only at the tabs.
                let fields = bytes[start..<end].split(separator: 0x09, maxSplits: 5, omittingEmptySubsequences: false)
                func text(_ index: Int) -> String { String(decoding: fields[index], as: UTF8.self) }
                guard fields.count == 6, let kind = Change.Kind(rawValue: text(0)), let version = ObjectID(hexBytes: fields[1]),
                    let seconds = Int64(text(2)), let key = DocumentKey(stored: text(5))
                else { return nil }
                let isNone = fields[3].elementsEqual([UInt8(ascii: "-")])
                let via = isNone ? nil : ObjectID(hexBytes: fields[3])
                if !isNone, via == nil { return nil }
                let date = Date(timeIntervalSince1970: TimeInterval(seconds))
                changes.append((Change(kind: kind, key: key, version: VersionID(version), author: text(4), date: date), via))
            }
            return changes
        }
    }

    static func message(for change: Change, via: ObjectID? = nil) -> String {
        """
        \(change.kind.rawValue) \(change.key.rawValue)

        Change: \(change.kind.rawValue)
        Document: \(change.key.rawValue)
        Version: \(change.version.hex)
        Device: \(change.author)
        \(via.map { "Via: \($0.hex)\n" } ?? "")
        """
    }

    /// The change a journal entry records, and the manifest it came through; nil when the commit is not an entry.
    private static func entry(from entry: CommitRecord) -> (change: Change, via: ObjectID?)? {
        let fields = MessageLines.trailers(of: entry.message)
        guard let kind = fields["Change"].flatMap(Change.Kind.init), let keyText = fields["Document"], let key = DocumentKey(stored: keyText),
            let version = fields["Version"].flatMap(VersionID.init(hex:)), let author = fields["Device"]
        else { return nil }
        let change = Change(
            kind: kind, key: key, version: version, author: author, date: Date(timeIntervalSince1970: TimeInterval(entry.author.time)))
        return (change, fields["Via"].flatMap(ObjectID.init(hex:)))
    }
}
