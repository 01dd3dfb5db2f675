import Foundation
internal import TruceGit

/// One change to a document, from any writer, with the document's state before and after it.
///
/// The counterpart of `UIDocumentStateChangedNotification` (watch `previous`
/// and `current`) and of `NSPersistentStoreRemoteChangeNotification` (a save
/// this program did not make arrives like its own).
public struct DocumentStateChange: Sendable, Equatable, Codable {
    /// The change as the journal records it: kind, document, version, author and date.
    public let change: Change
    /// The document's state just before the change.
    public let previous: DocumentState
    /// The document's state just after the change.
    public let current: DocumentState

    /// The document that changed.
    public var key: DocumentKey { change.key }
    /// The version the change wrote.
    public var version: VersionID { change.version }
    /// The device that made the version (the transaction author, in Core Data's words).
    public var author: String { change.author }
    /// What the change was: a save, a deletion, a resolution or a reopening.
    public var kind: Change.Kind { change.kind }

    /// True when the change moved the document to another state; a save to a settled document is not one.
    public var changedState: Bool { previous != current }
    /// True when the change put the document into conflict.
    public var becameInConflict: Bool { current == .inConflict && previous != .inConflict }
    /// True when the change settled a conflict.
    public var wasResolved: Bool { previous == .inConflict && current != .inConflict }

    init(change: Change, previous: DocumentState, current: DocumentState) {
        self.change = change
        self.previous = previous
        self.current = current
    }

    private enum CodingKeys: String, CodingKey { case kind, key, version, author, date, previous, current }

    /// One flat object: the change's fields beside the two states.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .kind)
        try container.encode(key, forKey: .key)
        try container.encode(version, forKey: .version)
        try container.encode(author, forKey: .author)
        try container.encode(change.date, forKey: .date)
        try container.encode(previous, forKey: .previous)
        try container.encode(current, forKey: .current)
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        change = Change(
            kind: try container.decode(Change.Kind.self, forKey: .kind), key: try container.decode(DocumentKey.self, forKey: .key),
            version: try container.decode(VersionID.self, forKey: .version), author: try container.decode(String.self, forKey: .author),
            date: try container.decode(Date.self, forKey: .date))
        previous = try container.decode(DocumentState.self, forKey: .previous)
        current = try container.decode(DocumentState.self, forKey: .current)
    }
}

extension DocumentStore {
    /// Every save, deletion and resolution as it happens, from any writer, with the state it moved the document between.
    ///
    /// Each access starts a new sequence that sees the changes recorded in
    /// the change journal after it. Writers are this object, another
    /// `DocumentStore` on the same path, another process, or a `sync` that
    /// brings versions in from either side: all of them record their changes
    /// in the journal, and the sequence reads the journal from the last
    /// position it delivered whenever the store's references move (inotify
    /// on Linux, dispatch sources on macOS). So nothing is delivered twice,
    /// and a change this object makes is delivered before the call that made
    /// it returns. The watching stops when the last sequence ends or the
    /// store is released, which also ends the sequences.
    public var events: AsyncStream<DocumentStateChange> { eventHub.subscribe(to: self) }

    /// Delivers this object's own changes to its `events` before the write returns, rather than on the watcher's next wake-up.
    func deliverEvents() { eventHub.deliver(from: self) }

    /// The events for `changes` (oldest first, as read from the journal), each with the document's states around it.
    ///
    /// The state after a document's newest change is read from its heads.
    /// Going back one change at a time, the version it wrote stops being a
    /// head and its parents become heads again: that is the state before it.
    /// A writer that landed after the journal was read shows in the newest
    /// state only, and its own change follows in the next read.
    static func stateChanges(for changes: [Change], in repository: Repository) throws -> [DocumentStateChange] {
        var indicesByKey: [DocumentKey: [Int]] = [:]
        for (index, change) in changes.enumerated() { indicesByKey[change.key, default: []].append(index) }
        var events = [DocumentStateChange?](repeating: nil, count: changes.count)
        for (key, indices) in indicesByKey {
            var heads = Set(try headReferences(of: key, in: repository).map(\.target))
            // The heads are read after the journal: a later save built on one of these versions may have landed since,
            // its entry not read yet. Such a head is rewound to its parents first, so the replay starts where the batch ended.
            let batch = Set(indices.map { changes[$0].version.objectID })
            var rewinding = true
            while rewinding {
                rewinding = false
                for head in heads where !batch.contains(head) {
                    guard try batch.contains(where: { try repository.isDescendant(head, of: $0) }) else { continue }
                    heads.remove(head)
                    heads.formUnion(try repository.readCommit(head).parents)
                    rewinding = true
                }
            }
            var after = try documentVersions(of: key, amongCandidates: Array(heads), in: repository).state
            for index in indices.reversed() {
                let change = changes[index]
                // A version pruned since is simply gone: its parents are unknown, so the replay keeps the rest.
                if heads.remove(change.version.objectID) != nil, let commit = try? repository.readCommit(change.version.objectID) {
                    heads.formUnion(commit.parents)
                }
                let before = try documentVersions(of: key, amongCandidates: Array(heads), in: repository).state
                events[index] = DocumentStateChange(change: change, previous: before, current: after)
                after = before
            }
        }
        return events.compactMap { $0 }
    }
}
