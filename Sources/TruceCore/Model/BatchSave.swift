import Foundation

/// One save of a batch: content (nil for a deletion) for a key, by a device, at a date.
public struct BatchSave: Sendable {
    /// The document saved.
    public let key: DocumentKey
    /// The new content; nil saves a deletion.
    public let content: Data?
    /// The device that saves it; nil is the store's device, else `DocumentStore.fallbackDevice`, as for every `device:`.
    public let device: String?
    /// The version's author date.
    public let date: Date
    /// The version this save is made from; nil chains it on the key's previous save in the batch, or its current version.
    public let base: VersionID?
    /// git's committer date, when the version is written; nil is now. Fixing it (with `date`) makes the version id
    /// the same on every run, which is what TruceTesting's fabricated stores need.
    public let committerDate: Date?

    /// A save of `content` to `key`; every parameter but those two has `save`'s default.
    public init(
        key: DocumentKey, content: Data?, device: String? = nil, date: Date = Date(), base: VersionID? = nil, committerDate: Date? = nil
    ) {
        self.key = key
        self.content = content
        self.device = device
        self.date = date
        self.base = base
        self.committerDate = committerDate
    }
}
