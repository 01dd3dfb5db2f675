import Foundation
internal import TruceGit

/// Reading a conflict for its resolvers: every head and the base with their bytes, and the history they reach.
extension ReadSession {
    /// The conflict set of a document in conflict; `mergeBase` answers the set's merge-base lookups later.
    func conflictSet(of key: DocumentKey, mergeBase: @escaping @Sendable ([VersionID]) throws(TruceError) -> ConflictSet.Side?) throws
        -> ConflictSet
    {
        let versions = try versions(of: key)
        guard versions.state == .inConflict, let current = versions.current else {
            if versions.current == nil { throw TruceError.documentNotFound(key) }
            throw TruceError.notInConflict(key)
        }
        func side(_ version: Version) throws -> ConflictSet.Side {
            ConflictSet.Side(version: version, content: try contents(of: version))
        }
        let heads = versions.heads.map(\.id)
        // Two heads: their well-defined merge base (criss-cross and reopened conflicts included); more: the octopus base.
        let base = heads.count == 2 ? try engine.mergeBaseSide(of: heads[0], and: [heads[1]], key: key) : try versions.base.map(side)
        return ConflictSet(
            key: key, current: try side(current), conflicts: try versions.conflicts.map(side), base: base, equivalents: versions.equivalents,
            mergeBase: mergeBase)
    }

}

extension StoreEngine {
    /// The versions of `key` that `tips` reach, newest first, at most `limit`.
    func history(from tips: [VersionID], of key: DocumentKey, limit: Int) throws -> [Version] {
        try repository.walk(from: tips.map(\.objectID)).prefix(limit).map { try readVersion(VersionID($0), of: key) }
    }
}
