/// Where a document stands, the counterpart of `UIDocument.DocumentState`.
public enum DocumentState: String, Sendable, Codable, CustomStringConvertible {
    /// The store has no version of the document.
    case absent
    /// One head, holding content.
    case settled
    /// One head, a deletion.
    case deleted
    /// Several heads: versions were made concurrently and wait for a resolution.
    case inConflict

    public var description: String {
        switch self {
        case .absent: "absent"
        case .settled: "settled"
        case .deleted: "deleted"
        case .inConflict: "in conflict"
        }
    }
}
