import Foundation
import TruceCore

/// How arrays are matched: the structured resolver's options, read from config.
///
/// `resolver.structured.identity = id, uuid, key, _id` names the members that
/// identify array elements, tried in order; `identityPaths = /items=sku,
/// /teams/*/members=email` sets one member for the arrays at those JSON
/// Pointer paths (`*` stands for any one step); `arrays = sequence` merges
/// every array as a sequence, never by identity; `siblings = ask` sends an
/// object whose members both sides changed to a person, whole.
package struct MergeRules: Sendable, Equatable {
    /// How arrays are merged when their elements could be matched by identity.
    package enum ArrayRule: String, Sendable, CaseIterable {
        /// Arrays of objects that all carry an identity member are matched by it; other arrays are sequences.
        case identity
        /// Every array is merged as a sequence three-way.
        case sequence
    }

    /// What a merge does when both sides changed members of one object (different members, or one differently).
    package enum SiblingRule: String, Sendable, CaseIterable {
        /// Each member merges on its own: edits of different members are all kept.
        case merge
        /// A person decides the object: for files where a clean merge of neighbouring edits is not wanted.
        case ask
    }

    package static let defaultIdentityMembers = ["id", "uuid", "key", "_id"]

    package var identityMembers = MergeRules.defaultIdentityMembers
    /// Per path, the one identity member of the arrays there; the path's steps, `*` for any.
    package var identityPaths: [(path: [String], member: String)] = []
    package var arrays = ArrayRule.identity
    package var siblings = SiblingRule.merge

    package init() {}

    /// The rules `options` set; a config error for a malformed value.
    package init(_ options: ResolverOptions) throws(TruceError) {
        if let text = options["identity"] {
            identityMembers = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            if identityMembers.isEmpty { throw options.invalid("identity", text, "expected member names separated by commas") }
        }
        if let text = options["identityPaths"] {
            for entry in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !entry.isEmpty {
                guard entry.hasPrefix("/"), let equals = entry.lastIndex(of: "="), !entry[entry.index(after: equals)...].isEmpty else {
                    throw options.invalid("identityPaths", text, "expected /json/pointer=member entries separated by commas")
                }
                identityPaths.append((JSONPointer.tokens(String(entry[..<equals])), String(entry[entry.index(after: equals)...])))
            }
        }
        arrays = try options.choice("arrays", default: ArrayRule.identity)
        siblings = try options.choice("siblings", default: SiblingRule.merge)
    }

    /// The members that may identify the elements of the array at `path`, in the order they are tried.
    func identityCandidates(at path: [String]) -> [String] {
        guard arrays == .identity else { return [] }
        for rule in identityPaths
        where rule.path.count == path.count
            && zip(rule.path, path).allSatisfy({ $0 == "*" || $0.utf8.elementsEqual($1.utf8) })
        {
            return [rule.member]
        }
        return identityMembers
    }

    /// The rules in words, for `explain`.
    package var summary: [String] {
        var lines = [
            arrays == .identity
                ? "arrays of objects that all carry one of \(identityMembers.joined(separator: ", ")) are matched by it; other arrays merge as sequences"
                : "every array merges as a sequence (arrays = sequence)"
        ]
        for rule in identityPaths { lines.append("array at \(JSONPointer.string(rule.path)) is matched by \(rule.member)") }
        if siblings == .ask { lines.append("an object whose members both sides changed goes to a person whole (siblings = ask)") }
        return lines
    }

    package static func == (lhs: MergeRules, rhs: MergeRules) -> Bool {
        lhs.identityMembers == rhs.identityMembers && lhs.arrays == rhs.arrays && lhs.siblings == rhs.siblings
            && lhs.identityPaths.map { $0.path + ["=", $0.member] } == rhs.identityPaths.map { $0.path + ["=", $0.member] }
    }
}

/// JSON Pointers (RFC 6901): `/editor/theme`, `~1` for `/` and `~0` for `~` inside a step.
enum JSONPointer {
    static func string(_ tokens: [String]) -> String {
        tokens.map { "/" + $0.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1") }.joined()
    }

    static func tokens(_ pointer: String) -> [String] {
        guard !pointer.isEmpty else { return [] }
        return pointer.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
            .map { $0.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~") }
    }
}
