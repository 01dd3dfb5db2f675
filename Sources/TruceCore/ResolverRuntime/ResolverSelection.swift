import Foundation
internal import TruceGit

/// Which resolvers settle a document, in order, and the config line that chose them.
public struct ResolverChoice: Sendable {
    /// The first resolver, then each `resolver.<name>.fallback` in turn.
    public let chain: [String]
    /// Where the first one came from, for people: `info/attributes line 3: *.md merge=three-way`.
    public let source: String
    /// The `merge` attribute that decided: the synced `.truce/attributes` line's, else the one `git check-attr merge` reports.
    let mergeAttribute: AttributeValue
    /// The options config gives each resolver of the chain.
    public let options: [String: ResolverOptions]
    /// Each resolver of the chain by name: a registered one, or one the registry's provider made from config.
    public let resolvers: [String: any Resolver]
    /// Seconds each resolver of the chain may run: `resolver.<name>.timeout`, else the resolver's `defaultTimeout`.
    public let timeouts: [String: Double]
    /// Fallbacks of the chain the call cannot use (a resolver given directly comes with no registry), with why:
    /// the chain goes past them, and says so.
    public let skipped: [String: String]
    /// How a deletion against an edit is settled before the chain runs.
    public let deleteConflict: DeleteConflictPolicy
    /// Where `deleteConflict` came from, for people: the config line, or the default.
    public let deleteConflictSource: String
    /// The merge rules of the document's JSON fields: the store's `info/fields`, then the synced `.truce/fields`.
    public var fieldRules: [FieldRule] = []
    /// What must hold of those fields after an automatic merge, from the same documents.
    public var fieldInvariants: [FieldInvariant] = []
}

/// What decides a key's resolver chain, read from the store: its `merge` attribute in `info/attributes`, the
/// store's own config, and the synced routing.
struct RoutingInputs: Sendable {
    /// What decides every key's chain alike: read once for a call that settles many documents.
    struct Shared: Sendable {
        let localConfig: [String: String]
        /// The store's own `info/attributes`, parsed: which of its lines decided, for people. A file that does not
        /// parse fails only the keys the synced routing leaves to it.
        let localAttributes: Result<AttributesFile, TruceError>
        let routing: Routing
        /// The store's own `info/fields`.
        let localFields: FieldRules
    }

    let localAttribute: AttributeValue
    let shared: Shared

    var localConfig: [String: String] { shared.localConfig }
    var localAttributes: Result<AttributesFile, TruceError> { shared.localAttributes }
    var routing: Routing { shared.routing }
    var localFields: FieldRules { shared.localFields }

    /// The config resolvers see: the store's own, with the synced `.truce/config` over it.
    var routedConfig: [String: String] { localConfig.merging(routing.config) { $1 } }
}

extension ReadSession {
    /// What decides `key`'s resolver chain, read at one moment; `shared` when the caller read the store's part
    /// already (`sharedRoutingInputs`).
    func routingInputs(for key: DocumentKey, sharing shared: RoutingInputs.Shared? = nil) throws -> RoutingInputs {
        RoutingInputs(localAttribute: try repository.attribute("merge", for: key.rawValue), shared: try shared ?? sharedRoutingInputs())
    }

    /// The part of every key's routing inputs that is the store's: its config, `info/attributes` and `info/fields`,
    /// and the synced routing. `resolveAll` read them once per document: three lookups of the routing documents, two
    /// files and the config, a fifth of deciding a thousand conflicts.
    func sharedRoutingInputs() throws -> RoutingInputs.Shared {
        let fieldsPath = engine.gitDirectory + "info/fields"
        let localFields = try FileManager.default.contents(atPath: fieldsPath).map { data throws(TruceError) in
            try FieldRules(parsing: data, name: "info/fields")
        }
        return RoutingInputs.Shared(
            localConfig: try engine.localConfig(),
            localAttributes: Result { () throws(TruceError) in try AttributesFile(path: engine.gitDirectory + "info/attributes") },
            routing: try routing(), localFields: localFields ?? FieldRules())
    }

    /// The config resolvers see: the store's own, with the synced `.truce/config` over it.
    func routedConfig() throws -> [String: String] {
        try engine.localConfig().merging(routing().config) { $1 }
    }
}

extension StoreEngine {
    /// The store's own config file as name → last value (names as libgit2 gives them).
    func localConfig() throws -> [String: String] {
        do {
            return Dictionary(try repository.configEntries().filter(\.isLocal).map { ($0.name, $0.value) }, uniquingKeysWith: { $1 })
        } catch {
            throw TruceError.invalidConfiguration(error.message)
        }
    }
}

extension ResolverChoice {
    /// The resolver chain for `key`: `explicit` when given, else the `merge` attribute from the synced routing, then
    /// `info/attributes`.
    ///
    /// git's built-in values map to resolvers: `merge` set or `text` is
    /// `three-way`, unset or `binary` is `list-conflicts` (the current version
    /// stays until a person decides), `union` is `union`; unspecified is
    /// `merge.default` from config, else `three-way`, as in git. Every name in
    /// the chain must be registered (or made by the registry's provider from
    /// the store's own config, as external drivers are) and every option
    /// valid. `given`, when not nil, are the options of `explicit` in place of
    /// config's. With `skippingUnavailable`, a fallback `registry` cannot
    /// supply is `skipped` rather than a configuration error.
    static func make(
        for key: DocumentKey, inputs: RoutingInputs, registry: ResolverRegistry, explicit: String?,
        options given: ResolverOptions?, skippingUnavailable: Bool = false
    ) throws(TruceError) -> ResolverChoice {
        let (localAttribute, localConfig, routing) = (inputs.localAttribute, inputs.localConfig, inputs.routing)
        // The synced routing decides first, so every replica picks alike; the local files fill in what it leaves open.
        let config = localConfig.merging(routing.config) { $1 }
        func configSource(_ name: String) -> String { routing.config[name] != nil ? Routing.configKey.rawValue : "config" }
        let decidingAttribute: AttributeValue
        let lineSource: String?
        var isSynced = false
        if let synced = routing.attributes, let line = synced.lastMergeLine(for: key), let value = line.merge {
            (decidingAttribute, lineSource, isSynced) = (value, "\(synced.name) line \(line.number): \(line.text)", true)
        } else {
            let line = try inputs.localAttributes.get().decidingLine(for: key, value: localAttribute)
            (decidingAttribute, lineSource) = (localAttribute, line.map { "info/attributes line \($0.number): \($0.text)" })
        }
        let first: String
        let source: String
        if let explicit {
            (first, source, isSynced) = (explicit, "--resolver \(explicit)", false)
        } else {
            switch decidingAttribute {
            case .set, .value("text"):
                (first, source) = ("three-way", lineSource ?? "merge attribute set")
            case .unset, .value("binary"):
                (first, source) = ("list-conflicts", lineSource ?? "merge attribute unset")
            case .value(let name):
                (first, source) = (name, lineSource ?? "merge=\(name) from an attributes file outside the store")
            case .unspecified where key.isTruceRecord:
                // Truce's own records (parked sessions, recorded answers): one per key, the latest kept whole.
                (first, source) = ("last-writer-wins", "built-in: \(key) is a record Truce keeps (.truce/sessions/, .truce/answers/)")
            case .unspecified:
                if let name = config["merge.default"] {
                    isSynced = routing.config["merge.default"] != nil
                    (first, source) = (name, "merge.default = \(name) in \(configSource("merge.default")) (no attributes line sets merge)")
                } else {
                    (first, source) = ("three-way", "default: no attributes line sets merge for this key")
                }
            }
        }
        var chain = [first]
        var options: [String: ResolverOptions] = [:]
        var resolvers: [String: any Resolver] = [:]
        var timeouts: [String: Double] = [:]
        var skipped: [String: String] = [:]
        var name = first
        var nameSource = source
        while true {
            let resolverOptions = (name == first ? given : nil) ?? Self.options(for: name, in: config)
            // Drivers come from the local config only: a synced line can name one, never define one. A name no resolver
            // has can stand for one with options of its own (`resolver.<name>.uses = structured`): routing picks it
            // for some paths, and the plain name for the rest.
            let uses = try registry.resolver(named: name, localConfig: localConfig) == nil ? resolverOptions["uses"] : nil
            if let uses, try registry.resolver(named: uses, localConfig: localConfig) == nil {
                throw .unknownResolver(uses, source: "resolver.\(name).uses in \(configSource("resolver.\(name).uses"))")
            }
            if let resolver = try registry.resolver(named: uses ?? name, localConfig: localConfig) {
                resolvers[name] = resolver
                do { try resolver.validate(options: resolverOptions) } catch let error as TruceError { throw error } catch {
                    throw .invalidConfiguration("resolver.\(name): \(error)")
                }
                options[name] = resolverOptions
                timeouts[name] = try resolverOptions.number("timeout", default: resolver.defaultTimeout, in: ResolverTimeouts.range)
            } else if skippingUnavailable && name != first {
                skipped[name] = "skipped: not a resolver this call can use (named by \(nameSource))"
            } else {
                let hint = isSynced ? "; the routing is synced, and this store's config defines no merge.\(name).driver" : ""
                throw .unknownResolver(name, source: nameSource + hint)
            }
            guard let next = resolverOptions["fallback"] else { break }
            if chain.contains(next) {
                throw .invalidConfiguration("resolver fallbacks form a loop: \((chain + [next]).joined(separator: " -> "))")
            }
            chain.append(next)
            let fallbackName = "resolver.\(name).fallback"
            isSynced = routing.config[fallbackName] != nil
            (name, nameSource) = (next, "resolver.\(name).fallback in \(configSource(fallbackName))")
        }
        let deleteConflict = try DeleteConflictPolicy(localConfig: config)
        let deleteConflictSource =
            config["truce.deleteconflict"].map { "truce.deleteConflict = \($0) in \(configSource("truce.deleteconflict"))" } ?? "default"
        return ResolverChoice(
            chain: chain, source: source, mergeAttribute: decidingAttribute, options: options, resolvers: resolvers, timeouts: timeouts,
            skipped: skipped,
            deleteConflict: deleteConflict, deleteConflictSource: deleteConflictSource,
            fieldRules: FieldRules(inputs.localFields.rules + routing.fields.rules).rules(for: key),
            fieldInvariants: FieldRules(invariants: inputs.localFields.invariants + routing.fields.invariants).invariants(for: key))
    }

    /// The options config gives `resolver`: its `resolver.<name>.<option>` lines.
    static func options(for resolver: String, in config: [String: String]) -> ResolverOptions {
        let prefix = "resolver.\(resolver)."
        let values = config.filter { $0.key.hasPrefix(prefix) && !$0.key.dropFirst(prefix.count).contains(".") }
            .map { (String($0.key.dropFirst(prefix.count)), $0.value) }
        return ResolverOptions(resolverName: resolver, values: Dictionary(values, uniquingKeysWith: { $1 }))
    }
}
