/// The resolvers a store can name in config, by name.
public struct ResolverRegistry: Sendable {
    private var resolvers: [String: any Resolver] = [:]

    /// A registry holding `resolvers`; a later one replaces an earlier one of the same name.
    public init(_ resolvers: [any Resolver] = []) {
        for resolver in resolvers { register(resolver) }
    }

    /// Adds `resolver`, replacing any other of the same name.
    public mutating func register(_ resolver: any Resolver) {
        resolvers[resolver.name] = resolver
    }

    /// The resolver called `name`, nil when none is registered.
    public func resolver(named name: String) -> (any Resolver)? { resolvers[name] }

    /// Every registered name, sorted.
    public var names: [String] { resolvers.keys.sorted() }
}
