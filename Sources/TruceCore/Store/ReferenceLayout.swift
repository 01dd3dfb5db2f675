/// Where a store keeps its references.
///
/// A document's heads live in one directory of their own,
/// `refs/truce/heads/<aa>/<bbbb…>/<version id>`, where `aabbbb…` is the blob
/// hash of the key (`printf %s KEY | git hash-object --stdin`). Hashing makes
/// every key a valid ref name whatever it holds, keeps keys that differ only in
/// case apart on case-insensitive file systems, and lets a reader list one
/// document's heads by reading one directory, whatever the store's size.
enum ReferenceLayout {
    static let headsRoot = "refs/truce/heads/"

    /// The directory of one document's head references, with a trailing slash.
    static func headsDirectory(of key: DocumentKey) -> String {
        let hex = ObjectID.blobHash(of: key.rawValue.utf8).hex
        return headsRoot + hex.prefix(2) + "/" + hex.dropFirst(2) + "/"
    }

    /// The reference that marks `version` as a head of `key`.
    static func headReference(of key: DocumentKey, version: VersionID) -> String {
        headsDirectory(of: key) + version.hex
    }

    /// The glob that lists every head reference of every document.
    static let allHeads = headsRoot + "*"
}
