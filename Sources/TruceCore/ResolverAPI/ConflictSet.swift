import Foundation

/// What a resolver gets: the current version, the conflict versions and their base, with their bytes.
public struct ConflictSet: Sendable {
    /// One version with its content (nil for a deletion).
    public struct Side: Sendable {
        /// The version.
        public let version: Version
        /// Its bytes; nil for a deletion.
        public let content: Data?

        /// A version with its bytes.
        public init(version: Version, content: Data?) {
            self.version = version
            self.content = content
        }
    }

    /// The document in conflict.
    public let key: DocumentKey
    /// The current version, by the deterministic rule every replica computes alike.
    public let current: Side
    /// The other heads, in the order of the current-version rule (newest first).
    public let conflicts: [Side]
    /// The merge base of all heads; nil when their histories are unrelated.
    ///
    /// With several merge bases (a criss-cross, such as two resolutions of the
    /// same heads) it is their recursive merge, as git's recursive strategy builds it.
    public let base: Side?
    /// Heads whose content equals one of `heads`: they are no conflict, but a resolution supersedes them too.
    public let equivalents: [Version]
    private let mergeBaseLookup: @Sendable ([VersionID]) throws(TruceError) -> Side?
    /// Every merge base of a set of versions, unfolded; set by the store that read the conflict.
    var mergeBasesLookup: (@Sendable ([VersionID]) throws(TruceError) -> [Side])?

    /// A conflict of `current` and `conflicts` against `base`; `mergeBase` answers ``mergeBase(of:and:)`` (nil: `base`).
    public init(
        key: DocumentKey, current: Side, conflicts: [Side], base: Side?, equivalents: [Version] = [],
        mergeBase: (@Sendable ([VersionID]) throws(TruceError) -> Side?)? = nil
    ) {
        self.key = key
        self.current = current
        self.conflicts = conflicts
        self.base = base
        self.equivalents = equivalents
        // Without a way to look bases up, the set's own base stands for every step: right for two heads.
        self.mergeBaseLookup = mergeBase ?? { _ in base }
    }

    /// Every head, current first: the deterministic order resolvers fold them in.
    public var heads: [Side] { [current] + conflicts }

    /// Every head a resolution settles, equivalents included: current first, then the current-version rule's order.
    public var settledVersions: [Version] {
        [current.version] + (conflicts.map(\.version) + equivalents).sorted { $0.isMoreCurrent(than: $1) }
    }

    /// The merge base of the first version against all the others together (`git merge-base A B C`).
    ///
    /// Folding N heads pairwise needs it: the base for merging head i into the
    /// result of heads 0..<i is the merge base of head i and those heads.
    public func mergeBase(of first: VersionID, and others: [VersionID]) throws(TruceError) -> Side? {
        // Two heads asked for together: their base is `base`, read with the set, and nothing is looked up again.
        if conflicts.count == 1, Set([first] + others) == Set(heads.map(\.version.id)) { return base }
        return try mergeBaseLookup([first] + others)
    }

    /// Every merge base of `first` against `others`, each a version of the document, in the current-version rule's
    /// order: one, or several for a criss-cross (two replicas resolved overlapping sets of heads).
    ///
    /// ``mergeBase(of:and:)`` folds several into one virtual base line by
    /// line, as git's recursive strategy does. A resolver that merges by
    /// meaning (a counter adds changes up) folds them its own way instead:
    /// folded line by line, a count two bases changed falls back to one of
    /// them, and the changes only the other holds are counted again. A set
    /// built without a store gives `mergeBase(of:and:)`'s one base.
    public func mergeBases(of first: VersionID, and others: [VersionID]) throws(TruceError) -> [Side] {
        guard let mergeBasesLookup else { return try mergeBase(of: first, and: others).map { [$0] } ?? [] }
        return try mergeBasesLookup([first] + others)
    }
}
