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

    /// Seconds the store lets the resolver run when `resolver.<name>.timeout` does not say: 30 unless the resolver says otherwise.
    var defaultTimeout: Double { get }

    /// Decides what settles `conflict`, without writing anything; it may await (a service, a person, a process).
    ///
    /// `context` holds the resolver's options, the document's history and
    /// the deadline. Return `.pass` when the resolver does not apply (binary
    /// content, no base): the chain's next resolver runs.
    ///
    /// Throw when it applies but cannot do its work (a head it cannot read, a
    /// service that does not answer): that counts as a failure, as output
    /// that fails `OutputValidation` does, and the chain's fallback runs, as
    /// Couchbase Lite falls back to its default resolver when a custom one
    /// throws. Not finishing by `context.deadline` (`resolver.<name>.timeout`
    /// seconds, default `defaultTimeout`) is a failure too: the store cancels
    /// the resolver's task and, a second later at most, stops waiting for it
    /// whether or not it heeds the cancellation, with the reason "it did not
    /// finish within N s". When no later resolver settles the conflict, the
    /// document stays in conflict: if one asks for a person the failure is
    /// among the reasons, else `resolve` throws the first failure (a
    /// `TruceError` as it was thrown, any other error as
    /// `TruceError.resolverFailed`). Keeping a version that is not a head is a
    /// failure too. A store that fails underneath (`.storeFailure`, `.busy`)
    /// is not the resolver's failure: it ends the chain and is reported as it is.
    func resolve(_ conflict: ConflictSet, context: ResolutionContext) async throws -> ResolutionOutcome

    /// What `options` make the resolver do, in words, for `explain`; empty when its configured options say it all.
    func settings(for options: ResolverOptions) -> [String]
}

extension Resolver {
    public var definition: String? { nil }

    public var defaultTimeout: Double { ResolverTimeouts.default }

    public func validate(options: ResolverOptions) throws {}

    public func settings(for options: ResolverOptions) -> [String] { [] }
}
