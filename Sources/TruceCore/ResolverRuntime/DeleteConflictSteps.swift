import Foundation

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
