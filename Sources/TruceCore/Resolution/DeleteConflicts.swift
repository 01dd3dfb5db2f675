import Foundation

/// How a conflict between a deletion and an edit is settled: `truce.deleteConflict` in the store's config.
public enum DeleteConflictPolicy: String, Sendable, CaseIterable, Codable {
    /// The edits survive: the heads that deleted the document are resolved; several edited heads still go to the resolver chain.
    case modifyWins = "modify-wins"
    /// The deletion wins: the resolution is a deletion that resolves every edit.
    case deleteWins = "delete-wins"

    /// The policy the store's own config sets, modify-wins when unset (nothing is lost unless asked).
    init(localConfig: [String: String]) throws(TruceError) {
        // libgit2 lowercases the section and key of every name it reads.
        guard let text = localConfig["truce.deleteconflict"] else {
            self = .modifyWins
            return
        }
        guard let policy = Self.allCases.first(where: { $0.rawValue == text.lowercased() }) else {
            throw .invalidConfiguration("truce.deleteConflict = \(text): expected one of modify-wins, delete-wins")
        }
        self = policy
    }
}

/// What the delete-conflict policy leaves of a conflict set.
enum DeleteConflictStep {
    /// The policy settles it alone, keeping this head (nil: settling as a deletion).
    case settled(keeping: ConflictSet.Side?)
    /// These heads remain for the resolver chain, or a person, to decide.
    case contested(ConflictSet)
}

extension ConflictSet {
    /// True when some heads deleted the document and others hold content.
    public var isDeleteConflict: Bool {
        heads.contains { $0.content == nil } && heads.contains { $0.content != nil }
    }

    /// Applies `policy` to a delete conflict; any other conflict is left whole.
    ///
    /// Under modify-wins with several edited heads, the remaining conflict is
    /// those heads in the same order, with their own merge base; the deleting
    /// heads are still parents of whatever resolution follows.
    func applying(_ policy: DeleteConflictPolicy) throws(TruceError) -> DeleteConflictStep {
        guard isDeleteConflict else { return .contested(self) }
        let edited = heads.filter { $0.content != nil }
        switch policy {
        case .deleteWins:
            return .settled(keeping: nil)
        case .modifyWins where edited.count == 1:
            return .settled(keeping: edited[0])
        case .modifyWins:
            let whole = self
            let base = try mergeBase(of: edited[0].version.id, and: edited.dropFirst().map(\.version.id))
            return .contested(
                ConflictSet(
                    key: key, current: edited[0], conflicts: Array(edited.dropFirst()), base: base,
                    mergeBase: { (ids: [VersionID]) throws(TruceError) -> Side? in try whole.mergeBase(of: ids[0], and: Array(ids.dropFirst())) }
                ))
        }
    }
}

extension DocumentStore {
    /// The store's delete-conflict policy: `truce.deleteConflict` in its own config, modify-wins when unset.
    func deleteConflictPolicy() throws(TruceError) -> DeleteConflictPolicy {
        try DeleteConflictPolicy(localConfig: try withRepository { try routedConfig($0) })
    }

    /// The conflict a person decides: under modify-wins with several edited heads only those, otherwise every head.
    ///
    /// `conflicts`, a resolver chain that needs a person, and a person's
    /// answers all use this set, so the points one lists are the points the
    /// other accepts.
    public func contestedConflictSet(of key: DocumentKey) throws(TruceError) -> ConflictSet {
        try contested(conflictSet(of: key))
    }

    func contested(_ conflict: ConflictSet) throws(TruceError) -> ConflictSet {
        guard conflict.isDeleteConflict, case .contested(let edited) = try conflict.applying(deleteConflictPolicy()) else { return conflict }
        return edited
    }
}
