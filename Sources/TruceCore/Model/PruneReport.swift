import Foundation

/// What one prune removed and kept.
public struct PruneReport: Sendable, Codable {
    /// Documents whose only head was a deletion older than the grace period: their refs are gone.
    public let droppedDocuments: [DocumentKey]
    /// Reflog entries older than the grace period.
    public let expiredReflogEntries: Int
    /// Objects written into the new pack: everything something still needs.
    public let packedObjects: Int
    /// Loose objects, packs and temporary files deleted.
    public let removedFiles: Int
    /// Bytes in the object database before and after.
    public let bytesBefore: Int
    /// The same, after.
    public let bytesAfter: Int
}
