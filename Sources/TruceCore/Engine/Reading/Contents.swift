import Foundation
internal import TruceGit

/// Reading what versions hold and which document they belong to.
extension StoreEngine {
    /// The bytes of `version`, nil when it is a deletion.
    func contents(of version: Version) throws -> Data? {
        let commit = try repository.readCommit(version.id.objectID)
        guard let entry = try repository.entry(at: version.key.rawValue, inTree: commit.tree), !entry.isTree else { return nil }
        return try repository.readBlob(entry.id)
    }

    /// The version whose id is `text` or starts with it (at least 4 hexadecimal digits); a clear error otherwise.
    func resolveVersionID(_ text: String) throws -> VersionID {
        let isHex =
            !text.isEmpty
            && text.utf8.allSatisfy {
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0 | 0x20)
            }
        guard isHex, (4...40).contains(text.utf8.count) else { throw TruceError.versionNotFound(text) }
        do {
            return try VersionID(repository.commitID(forPrefix: text))
        } catch {
            if error.isNotFound { throw TruceError.versionNotFound(text) }
            if error.isAmbiguous { throw TruceError.ambiguousVersion(text) }
            throw error
        }
    }

    /// Every head reference of the store, one group per document (each group non-empty); reads every head ref.
    func headReferencesByDocument() throws -> [[(name: String, target: ObjectID)]] {
        var directories: [Substring: [(name: String, target: ObjectID)]] = [:]
        for reference in try repository.references(under: ReferenceLayout.headsRoot) {
            // Bytes, not characters: a ref name is ASCII, and finding a character boundary costs more than the rest.
            guard let slash = reference.name.utf8.lastIndex(of: UInt8(ascii: "/")) else { continue }
            directories[reference.name[..<slash], default: []].append(reference)
        }
        return Array(directories.values)
    }

    /// The key a version commit (a version's or a head reference's target) names, nil for a commit that is not a Truce version.
    func documentKey(of id: ObjectID) throws -> DocumentKey? {
        guard let message = VersionMessage(parsing: try repository.readCommit(id).message) else { return nil }
        return try? DocumentKey(message.key)
    }

    /// The key a head reference's version names; a head that is no Truce version is a damaged store.
    func key(ofHead id: ObjectID) throws -> DocumentKey {
        guard let key = try documentKey(of: id) else {
            throw TruceError.versionOfAnotherDocument(VersionID(id), requested: "unknown", actual: "no document (not a Truce version)")
        }
        return key
    }
}
