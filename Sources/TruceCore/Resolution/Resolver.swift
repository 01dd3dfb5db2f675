import Foundation

/// A plugin that settles a document's conflict: a name, and one function from a conflict set to an outcome.
///
/// Built-in resolvers live under `Plugins/`, each written against this
/// protocol and the rest of TruceCore's public API only, so a resolver written
/// in an app looks exactly like a built-in one: register it in a
/// `ResolverRegistry` and name it in the store's `info/attributes`
/// (`*.todo merge=my-resolver`).
public protocol Resolver: Sendable {
    /// The name config uses for it: `merge=<name>`, `resolver.<name>.<option>`.
    var name: String { get }

    /// Where config defines what the resolver runs, for `explain`: an external driver's command and its config line.
    ///
    /// nil for a resolver written in Swift, whose behaviour is its code.
    var definition: String? { get }

    /// Checks `options` before any conflict is met, so that `explain` can report a bad option.
    func validate(options: ResolverOptions) throws

    /// Decides what settles `conflict`, without writing anything.
    func resolve(_ conflict: ConflictSet, options: ResolverOptions) throws -> ResolutionOutcome
}

extension Resolver {
    public var definition: String? { nil }

    public func validate(options: ResolverOptions) throws {}
}

/// What a resolver decided.
public enum ResolutionOutcome: Sendable {
    /// Settled with new content; nil content settles the conflict as a deletion.
    case resolved(content: Data?)
    /// Settled by keeping one head exactly as it is (its tree becomes the resolution's tree).
    case kept(VersionID)
    /// Only a person can settle it; these are the points to decide.
    case needsPerson([ConflictPoint])
    /// This resolver does not apply (binary content, no base, …): the chain's next resolver runs.
    case pass(reason: String)
}
