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
        try RouteChange(access: access).route(pattern, to: resolver, options: options, author: author(device), date: date)
    }

    /// Writes the merge rules of JSON fields as the synced document `.truce/fields`, so every replica merges alike;
    /// returns the version written, nil when it held these rules already. See ``FieldRules``.
    @discardableResult
    public func setFieldRules(_ rules: FieldRules, device: String? = nil, date: Date = Date()) throws(TruceError) -> Version? {
        try RouteChange(access: access).setFieldRules(rules, author: author(device), date: date)
    }
}
