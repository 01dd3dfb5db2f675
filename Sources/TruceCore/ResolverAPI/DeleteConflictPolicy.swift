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

extension DeleteConflictPolicy {
    /// What the policy drops of a delete conflict, for the resolution's record: under delete-wins every edit, under
    /// modify-wins every deletion (the edit kept is `kept`, nil when several edits go on to the resolver chain).
    func decision(on conflict: ConflictSet, keeping kept: ConflictSet.Side?) -> ResolutionDecision? {
        guard conflict.isDeleteConflict else { return nil }
        let deletions = conflict.heads.filter { $0.content == nil }.map(\.version)
        let edits = conflict.heads.filter { $0.content != nil }.map(\.version)
        switch self {
        case .deleteWins:
            return .wholeDocument(rule: "delete-wins: the deletion stands", kept: deletions.first, dropped: edits)
        case .modifyWins:
            let rule = kept == nil ? "modify-wins: the edits are merged" : "modify-wins: the edit stands"
            return .wholeDocument(rule: rule, kept: kept?.version, dropped: deletions)
        }
    }
}
