import Foundation

extension DocumentStore {
    /// What `resolve` does for a document no conflict holds, so that resolving is idempotent; nil when `key` is in conflict.
    ///
    /// Heads with identical content are merged into one version, as
    /// `resolveAll` merges them (a resolution by `identicalContentResolverName`
    /// keeping the current version's tree); one head is
    /// `ResolveResult.nothingToResolve`. Only the automatic forms of `resolve`
    /// come here: a person's answers for a settled document stay an error.
    func resolvingWithoutConflict(_ key: DocumentKey, device: String, dryRun: Bool) throws(TruceError) -> ResolveResult? {
        let versions = try versions(of: key)
        guard versions.state != .inConflict else { return nil }
        guard let current = versions.current else { throw .documentNotFound(key) }
        guard !versions.equivalents.isEmpty else { return .nothingToResolve(current) }
        let side = ConflictSet.Side(version: current, content: try contents(of: current))
        if dryRun { return .wouldResolve(content: side.content, resolver: Self.identicalContentResolverName) }
        let conflict = ConflictSet(key: key, current: side, conflicts: [], base: nil, equivalents: versions.equivalents)
        return try write(conflict, settlement: .kept(current), resolver: Self.identicalContentResolverName, device: device)
    }
}
