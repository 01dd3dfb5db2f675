import Foundation

/// What `resolve` did, or would do with `dryRun`: every `resolve` overload returns one, a person's answers included.
public enum ResolveResult: Sendable {
    /// A resolution was written; `state` is the document's state afterwards (a save that landed meanwhile keeps it in conflict).
    case resolved(Version, resolver: String, state: DocumentState)
    /// A person must decide these points; nothing was written.
    case needsPerson([ConflictPoint], resolver: String, reasons: [String])
    /// `dryRun`: the resolver settled it, but nothing was written.
    case wouldResolve(content: Data?, resolver: String)
    /// The document was settled already (one head, this version, content or a deletion): nothing was written.
    case nothingToResolve(Version)

    /// The resolution written, for `.resolved`; nil when nothing was written.
    public var version: Version? {
        if case .resolved(let version, _, _) = self { version } else { nil }
    }
}
