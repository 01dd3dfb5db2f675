import Foundation

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
    /// For a resolution, how many values it dropped, as its decisions record them (0 for anything else): when it is
    /// more than 0, an app can offer its user a review (`DocumentStore.review(_:since:resolver:)`).
    public let droppedValueCount: Int

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

    init(change: Change, previous: DocumentState, current: DocumentState, droppedValueCount: Int = 0) {
        self.change = change
        self.previous = previous
        self.current = current
        self.droppedValueCount = droppedValueCount
    }

    private enum CodingKeys: String, CodingKey { case kind, key, version, author, date, previous, current, droppedValueCount }

    /// One flat object: the change's fields beside the two states and the count of dropped values.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .kind)
        try container.encode(key, forKey: .key)
        try container.encode(version, forKey: .version)
        try container.encode(author, forKey: .author)
        try container.encode(change.date, forKey: .date)
        try container.encode(previous, forKey: .previous)
        try container.encode(current, forKey: .current)
        try container.encode(droppedValueCount, forKey: .droppedValueCount)
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        change = Change(
            kind: try container.decode(Change.Kind.self, forKey: .kind), key: try container.decode(DocumentKey.self, forKey: .key),
            version: try container.decode(VersionID.self, forKey: .version), author: try container.decode(String.self, forKey: .author),
            date: try container.decode(Date.self, forKey: .date))
        previous = try container.decode(DocumentState.self, forKey: .previous)
        current = try container.decode(DocumentState.self, forKey: .current)
        // Absent from what earlier releases encoded.
        droppedValueCount = try container.decodeIfPresent(Int.self, forKey: .droppedValueCount) ?? 0
    }
}
