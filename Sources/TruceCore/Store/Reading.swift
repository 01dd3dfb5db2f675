import Foundation
internal import TruceGit

extension DocumentStore {
    /// The version of `key` whose id is `id` or starts with it (at least 4 hexadecimal digits).
    public func version(_ id: String, of key: DocumentKey) throws(TruceError) -> Version {
        try withRepository { repository in
            try Self.readVersion(Self.resolveVersionID(id, in: repository), of: key, in: repository)
        }
    }

    /// The bytes of `version`, nil when it is a deletion.
    public func contents(of version: Version) throws(TruceError) -> Data? {
        try withRepository { try Self.contents(of: version, in: $0) }
    }

    static func contents(of version: Version, in repository: Repository) throws -> Data? {
        let commit = try repository.readCommit(version.id.objectID)
        guard let entry = try repository.entry(at: version.key.rawValue, inTree: commit.tree), !entry.isTree else { return nil }
        return try repository.readBlob(entry.id)
    }

    /// The bytes of the current version, nil when the document is deleted; throws when it is absent.
    public func contents(of key: DocumentKey) throws(TruceError) -> Data? {
        guard let current = try currentVersion(of: key) else { throw .documentNotFound(key) }
        return try contents(of: current)
    }

    static func resolveVersionID(_ text: String, in repository: Repository) throws -> VersionID {
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
}
