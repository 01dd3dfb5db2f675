/// Makes a resolver for a name no registered resolver has, from the store's own config file, or returns nil.
///
/// `localConfig` holds only the lines of the store's `config` file (never a
/// global or system file, never anything a sync brings), names as libgit2
/// gives them: section and key lowercased, subsection as written
/// (`merge.mergiraf.driver`). This is how git's external merge drivers are found.
public typealias ResolverProvider = @Sendable (_ name: String, _ localConfig: [String: String]) throws(TruceError) -> (any Resolver)?

/// The resolvers a store can name in config, by name.
public struct ResolverRegistry: Sendable {
    private var resolvers: [String: any Resolver] = [:]
    /// Asked for a name no registered resolver has; registered resolvers always win.
    public var provider: ResolverProvider?

    /// A registry holding `resolvers`; a later one replaces an earlier one of the same name.
    public init(_ resolvers: [any Resolver] = [], provider: ResolverProvider? = nil) {
        self.provider = provider
        for resolver in resolvers { register(resolver) }
    }

    /// Adds `resolver`, replacing any other of the same name.
    public mutating func register(_ resolver: any Resolver) {
        resolvers[resolver.name] = resolver
    }

    /// The resolver called `name`, nil when none is registered.
    public func resolver(named name: String) -> (any Resolver)? { resolvers[name] }

    /// The registered resolver called `name`, else the one the provider makes from `localConfig`, else nil.
    func resolver(named name: String, localConfig: [String: String]) throws(TruceError) -> (any Resolver)? {
        if let resolver = resolvers[name] { return resolver }
        return try provider?(name, localConfig)
    }

    /// Every registered name, sorted.
    public var names: [String] { resolvers.keys.sorted() }
}
