/// The resolver names the store itself writes into `Resolved-By:`, and the resolvers' default timeouts.
///
/// `DocumentStore` publishes the same values (`personResolverName`,
/// `defaultResolverTimeout`…) for apps; the engine and the resolver API read
/// them here, so nothing below the facade names it.
enum ResolverNames {
    /// A person's resolution: answers to conflict points, or a whole file.
    static let person = "person"
    /// A resolution that merges heads holding identical content into one.
    static let identicalContent = "identical-content"
    /// A resolution by recorded answers (git's rerere).
    static let recordedAnswer = "recorded-answer"
}

/// How long a resolver may run.
enum ResolverTimeouts {
    /// Seconds a resolver may run when neither `resolver.<name>.timeout` nor the resolver's `defaultTimeout` says.
    static let `default`: Double = 30
    /// The timeouts `resolver.<name>.timeout` may set, in seconds: from a tenth of a second to a day.
    static let range = 0.1...86_400.0
}
