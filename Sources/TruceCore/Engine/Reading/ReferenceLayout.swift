internal import TruceGit

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

    /// The document directory of a head reference another store advertised, nil unless the name is exactly
    /// `refs/truce/heads/<2 hex>/<38 hex>/<the target's id>`: a remote cannot place a version anywhere else.
    static func headsDirectory(ofReference name: String, target: VersionID) -> String? {
        guard name.hasPrefix(headsRoot) else { return nil }
        let parts = name.dropFirst(headsRoot.count).split(separator: "/", omittingEmptySubsequences: false)
        let isHex = { (part: Substring) in part.allSatisfy { $0.isHexDigit && !$0.isUppercase } }
        guard parts.count == 3, parts[0].count == 2, parts[1].count == 38, parts[2] == target.hex, isHex(parts[0]), isHex(parts[1]) else {
            return nil
        }
        return headsRoot + parts[0] + "/" + parts[1] + "/"
    }
}
