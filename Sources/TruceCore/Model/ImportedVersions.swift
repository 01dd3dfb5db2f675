internal import TruceGit

/// The versions an import wrote, in the order written, held as one buffer of key bytes and one array of ids: as an
/// array of `ImportReport.ImportedVersion`, a million of them held 100 MB (a string and an entry each) to the import's
/// end, whatever its batch.
struct ImportedVersions: Sendable {
    private var keyBytes: [UInt8] = []
    /// Where each key's bytes end in `keyBytes`; it starts where the one before ends.
    private var keyEnds: [Int] = []
    private var ids: [ObjectID] = []

    var count: Int { ids.count }

    mutating func append(_ key: DocumentKey, _ version: VersionID) {
        keyBytes.append(contentsOf: key.rawValue.utf8)
        keyEnds.append(keyBytes.count)
        ids.append(version.objectID)
    }

    subscript(position: Int) -> ImportReport.ImportedVersion {
        let start = position == 0 ? 0 : keyEnds[position - 1]
        // The bytes are a valid key's UTF-8, so decoding gives back the very string appended.
        let key = DocumentKey(checked: String(decoding: keyBytes[start..<keyEnds[position]], as: UTF8.self))
        return ImportReport.ImportedVersion(key: key, version: VersionID(ids[position]))
    }

    /// Every version as an entry of its own.
    var all: [ImportReport.ImportedVersion] { (0..<count).map { self[$0] } }
}
