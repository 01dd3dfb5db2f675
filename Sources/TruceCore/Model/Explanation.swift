import Foundation
internal import TruceGit

/// Why a document's current version is current, and what would settle its conflict.
public struct Explanation: Sendable {
    /// The document's heads, current version first.
    public let versions: DocumentVersions
    /// One sentence: the rule that picked the current version among the heads.
    public let currentReason: String
    /// The `merge` attribute of the key in the store's `info/attributes`, as `git check-attr merge` prints it:
    /// `unspecified`, `set`, `unset`, or its value (a resolver's name).
    public let mergeAttribute: String
    /// The heads dated more than `DocumentStore.futureDateTolerance` ahead of this device's clock when explained,
    /// current first: versions from a replica whose clock runs ahead, which nothing loses (see `DocumentStore.save`).
    public var datedAhead: [Version] = []
}

extension Explanation {
    /// What `explain` adds when heads hold identical content: they count as one, and what supersedes them.
    static func equivalence(_ versions: DocumentVersions) -> String {
        guard !versions.equivalents.isEmpty else { return "" }
        let ids = versions.equivalents.map(\.id.short).joined(separator: ", ")
        return "; \(versions.equivalents.count) more head(s) (\(ids)) hold identical content and count as one with it: "
            + "the next save or resolution supersedes them, and `resolve --all` merges them into one"
    }

    /// The current-version rule as it picked `current` among `heads`, in words.
    static func reason(current: Version, heads: [Version]) -> String {
        let date = ISO8601.format(current.modificationDate)
        guard heads.count > 1 else { return "it is the only head" }
        let tied = heads.filter { $0.modificationDate == current.modificationDate }
        if tied.count == 1 {
            return "it has the latest author date (\(date)) of the \(heads.count) heads"
        }
        return "\(tied.count) heads share the latest author date (\(date)); the larger version id wins the tie"
    }
}
