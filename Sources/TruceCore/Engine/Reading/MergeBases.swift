import Foundation
internal import TruceGit

extension StoreEngine {
    /// The base for merging `first` into `others`: their merge base, made well defined for every history.
    ///
    /// - One merge base: that version.
    /// - Several (a criss-cross: two replicas resolved overlapping sets of
    ///   heads): their recursive merge, as git's recursive strategy builds a
    ///   virtual base. The bases are taken in the current-version rule's order
    ///   and folded with the three-way text merge, each step against the merge
    ///   base of the bases folded so far (recursively). The side's version is
    ///   the first base. When the bases do not merge cleanly (git would leave
    ///   markers in its virtual base, which no JSON or property list survives),
    ///   or one is binary or a deletion, the first base stands alone.
    /// - A reopened conflict (every version being merged reopens the same
    ///   resolution): the base of the versions that resolution had settled, so
    ///   the reopened conflict merges as the original one did.
    func mergeBaseSide(
        of first: VersionID, and others: [VersionID], key: DocumentKey, depth: Int = 0
    ) throws -> ConflictSet.Side? {
        let bases = try mergeBases(of: first, and: others, key: key)
        guard let firstBase = bases.first else { return nil }
        let firstContent = try contents(of: firstBase)
        // Deep criss-crosses are rare; past a few levels the first base is a fine, deterministic stand-in.
        guard bases.count > 1, depth < 4, var virtual = firstContent else { return ConflictSet.Side(version: firstBase, content: firstContent) }
        var folded = [firstBase.id]
        for base in bases.dropFirst() {
            guard let theirs = try contents(of: base),
                let stepBase = try mergeBaseSide(of: base.id, and: folded, key: key, depth: depth + 1),
                let stepBaseContent = stepBase.content,
                let step = try TextMerge.merge(base: stepBaseContent, ours: virtual, theirs: theirs), step.isClean
            else { return ConflictSet.Side(version: firstBase, content: firstContent) }
            virtual = step.content
            folded.append(base.id)
        }
        return ConflictSet.Side(version: firstBase, content: virtual)
    }

    /// Every merge base of `first` against `others`, in the current-version rule's order, with a reopened
    /// conflict's bases replaced by those of the versions its resolution had settled.
    func mergeBases(of first: VersionID, and others: [VersionID], key: DocumentKey) throws -> [Version] {
        let ids = try repository.mergeBases(of: first.objectID, against: others.map(\.objectID)).map(VersionID.init)
        if ids.count == 1, let settled = try reopenedResolutionParents(ids[0], merging: [first] + others, key: key) {
            guard settled.count > 1 else { return [] }
            return try mergeBases(of: settled[0], and: Array(settled.dropFirst()), key: key)
        }
        return try Set(ids).map { try readVersion($0, of: key) }.sorted { $0.isMoreCurrent(than: $1) }
    }

    /// The base `versions` shows for a document's distinct heads: the first merge base for two, the octopus base
    /// for more; a reopened conflict's is the base the versions its resolution settled had.
    func baseVersion(of heads: [VersionID], key: DocumentKey) throws -> Version? {
        guard heads.count > 1 else { return nil }
        if heads.count == 2 { return try mergeBases(of: heads[0], and: [heads[1]], key: key).first }
        guard let id = try repository.mergeBase(of: heads.map(\.objectID)).map(VersionID.init) else { return nil }
        if let settled = try reopenedResolutionParents(id, merging: heads, key: key) {
            return try baseVersion(of: settled, key: key)
        }
        return try readVersion(id, of: key)
    }

    /// The parents of `base` when it is a resolution that every one of `versions` reopens (or descends from a
    /// reopening of); nil otherwise.
    private func reopenedResolutionParents(
        _ base: VersionID, merging versions: [VersionID], key: DocumentKey
    ) throws -> [VersionID]? {
        let resolution = try readVersion(base, of: key)
        guard resolution.isResolution else { return nil }
        for id in versions {
            let since = try repository.walk(from: [id.objectID], hiding: [base.objectID])
            guard try since.contains(where: { try readVersion(VersionID($0), of: key).reopened == base }) else { return nil }
        }
        return resolution.parents
    }
}
