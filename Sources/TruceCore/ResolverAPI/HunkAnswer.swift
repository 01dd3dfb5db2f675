import Foundation

/// A person's answer for one conflict point.
public enum HunkAnswer: Sendable, Equatable {
    /// The current version's text.
    case ours
    /// The other head's text; only when there is exactly one conflict version.
    case theirs
    /// The base's text.
    case base
    /// Every head's text, current first, each distinct text once.
    case both
    /// Every head's text in the reverse order, the current version's last, each distinct text once.
    case bothReversed
    /// The text of the head (or base) whose id starts with this prefix.
    case version(String)
    /// Replacement text.
    case text(Data)

    /// Reads `ours`, `theirs`, `base`, `both`, `both-reversed` or a version id prefix.
    public init?(choice: String) {
        switch choice {
        case "ours": self = .ours
        case "theirs": self = .theirs
        case "base": self = .base
        case "both": self = .both
        case "both-reversed": self = .bothReversed
        case _ where (4...40).contains(choice.count) && choice.allSatisfy(\.isHexDigit): self = .version(choice.lowercased())
        default: return nil
        }
    }
}

extension HunkAnswer: CustomStringConvertible {
    /// The answer as `--take` spells it: `ours`, `both-reversed`, a version id prefix, or `text` for replacement text.
    public var description: String {
        switch self {
        case .ours: "ours"
        case .theirs: "theirs"
        case .base: "base"
        case .both: "both"
        case .bothReversed: "both-reversed"
        case .version(let prefix): prefix
        case .text: "text"
        }
    }
}
