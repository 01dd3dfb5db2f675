import Foundation

/// Routing keys to resolvers in the synced routing documents, which every replica reads alike.
extension DocumentStore {
    /// Routes the keys `pattern` matches to `resolver` with `options`, in the synced routing: `try store.route("*.todo", to: "todo-list")`.
    ///
    /// Writes what a person would write with `truce save`: the line
    /// `PATTERN merge=RESOLVER` in the document `.truce/attributes`
    /// (gitattributes syntax), and each option as `resolver.RESOLVER.OPTION` in
    /// the document `.truce/config` (git-config syntax, as `git config --file`
    /// writes it). Both documents sync like any other, so every replica that
    /// syncs picks the same resolver with the same options, and `resolve`,
    /// `explain` and `resolverChoice(for:registry:)` read them at once.
    ///
    /// A line of the same pattern loses its `merge` setting (its other
    /// attributes stay, a line left with none goes) and the new line follows
    /// the last line of that pattern, so the rule is replaced, never
    /// duplicated; a new pattern is appended, so it decides over earlier lines
    /// that match the same keys, as gitattributes reads them. Options not
    /// named keep their values. A document whose bytes would not change gets
    /// no new version. The resolver is not looked up here: each replica
    /// registers its own resolvers, and `explain` names an unknown one.
    ///
    /// A pattern, resolver name, option name or value that git's formats cannot
    /// hold, or a routing document in conflict, is `TruceError.invalidRoute`,
    /// and an unreadable routing document `.invalidConfiguration`; either way
    /// nothing is written. Returns the versions written, attributes first.
    @discardableResult
    public func route(
        _ pattern: String, to resolver: String, options: [String: String] = [:],
        device: String? = nil, date: Date = Date()
    ) throws(TruceError) -> [Version] {
        let device = try author(device)
        try RoutingRules.checkRoutePattern(pattern)
        try RoutingRules.checkRoutedResolver(resolver, pattern: pattern)
        let settings = try RoutingRules.routedOptions(options, resolver: resolver, pattern: pattern)
        let documents = try withEngine { engine in
            try [Routing.attributesKey, Routing.configKey].map { key throws -> RoutingDocument in
                let versions = try engine.documentVersions(of: key)
                guard let current = versions.current else { return RoutingDocument(current: nil, content: Data(), heads: 0) }
                return RoutingDocument(current: current, content: try engine.contents(of: current) ?? Data(), heads: versions.heads.count)
            }
        }
        for (key, document) in zip([Routing.attributesKey, Routing.configKey], documents) where document.heads > 1 {
            throw .invalidRoute(pattern, reason: "\(key) is in conflict (\(document.heads) heads); resolve it first, so no routing is lost")
        }
        let (attributes, config) = (documents[0], documents[1])
        let newAttributes = RoutingRules.attributes(attributes.content, routing: Array(pattern.utf8), to: resolver)
        _ = try AttributesFile(newAttributes, name: Routing.attributesKey.rawValue)
        let newConfig = settings.isEmpty ? config.content : try RoutingRules.config(config.content, setting: settings, pattern: pattern)
        var saves: [BatchSave] = []
        if newAttributes != attributes.content || attributes.current == nil {
            saves.append(BatchSave(key: Routing.attributesKey, content: newAttributes, device: device, date: date, base: attributes.current?.id))
        }
        if newConfig != config.content || (config.current == nil && !settings.isEmpty) {
            saves.append(BatchSave(key: Routing.configKey, content: newConfig, device: device, date: date, base: config.current?.id))
        }
        let ids = try saveBatch(saves, cancellation: nil)
        return try zip(saves, ids).map { save, id throws(TruceError) in try version(id.hex, of: save.key) }
    }
}

/// A routing document as `route` found it: its current version (nil when absent), that version's bytes, its number of heads.
private struct RoutingDocument: Sendable {
    let current: Version?
    let content: Data
    let heads: Int
}
