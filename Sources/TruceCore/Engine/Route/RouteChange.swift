import Foundation

/// Routing keys to a resolver in the synced routing documents, which every replica reads alike: the line
/// `PATTERN merge=RESOLVER` in `.truce/attributes` (gitattributes syntax) and each option as
/// `resolver.RESOLVER.OPTION` in `.truce/config` (git-config syntax).
///
/// A line of the same pattern loses its `merge` setting (its other
/// attributes stay, a line left with none goes) and the new line follows the
/// last line of that pattern, so a rule is replaced, never duplicated; a new
/// pattern is appended. Options not named keep their values. A document
/// whose bytes would not change gets no new version. Both documents are
/// written as one batch.
struct RouteChange: Sendable {
    let access: StoreAccess

    /// Routes the keys `pattern` matches to `resolver` with `options`; returns the versions written, attributes first.
    func route(_ pattern: String, to resolver: String, options: [String: String], author: String, date: Date) throws(TruceError) -> [Version] {
        try RoutingRules.checkRoutePattern(pattern)
        try RoutingRules.checkRoutedResolver(resolver, pattern: pattern)
        let settings = try RoutingRules.routedOptions(options, resolver: resolver, pattern: pattern)
        let (attributes, config) = try access.read { session in
            (try RoutingDocument(Routing.attributesKey, in: session), try RoutingDocument(Routing.configKey, in: session))
        }
        for document in [attributes, config] where document.heads > 1 {
            throw .invalidRoute(pattern, reason: "\(document.key) is in conflict (\(document.heads) heads); resolve it first, so no routing is lost")
        }
        let newAttributes = RoutingRules.attributes(attributes.content, routing: Array(pattern.utf8), to: resolver)
        _ = try AttributesFile(newAttributes, name: Routing.attributesKey.rawValue)
        let newConfig = settings.isEmpty ? config.content : try RoutingRules.config(config.content, setting: settings, pattern: pattern)
        var saves: [BatchSave] = []
        if newAttributes != attributes.content || attributes.current == nil {
            saves.append(BatchSave(key: Routing.attributesKey, content: newAttributes, device: author, date: date, base: attributes.current?.id))
        }
        if newConfig != config.content || (config.current == nil && !settings.isEmpty) {
            saves.append(BatchSave(key: Routing.configKey, content: newConfig, device: author, date: date, base: config.current?.id))
        }
        let ids = try access.saveBatch(saves, author: author, allowingFutureDates: false, cancellation: nil, progress: nil)
        return try access.read { session in try zip(saves, ids).map { save, id in try session.version(id.hex, of: save.key) } }
    }

    /// Puts `rules` in the synced rules document `.truce/fields` in place of its lines for `pattern`; every other line,
    /// comments included, stays as it was. Returns the version written, nil when nothing changed.
    func declareFieldRules(_ rules: FieldRules, for pattern: String, author: String, date: Date) throws(TruceError) -> Version? {
        try RoutingRules.checkRoutePattern(pattern)
        let document = try access.read { session in try RoutingDocument(Routing.fieldsKey, in: session) }
        let kept = String(decoding: document.content, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            .filter { line in line.split(whereSeparator: { $0 == " " || $0 == "\t" }).first.map(String.init) != pattern }
        var lines = kept.joined(separator: "\n")
        if !lines.isEmpty && !lines.hasSuffix("\n") { lines += "\n" }
        return try write(Data((lines + rules.text).utf8), of: document, author: author, date: date)
    }

    /// Writes `rules` as the synced rules document `.truce/fields`, replacing what it held; returns the version written,
    /// nil when it already held exactly these rules. A rules document in conflict is `.invalidRoute`: resolve it first.
    func setFieldRules(_ rules: FieldRules, author: String, date: Date) throws(TruceError) -> Version? {
        let document = try access.read { session in try RoutingDocument(Routing.fieldsKey, in: session) }
        let content = Data(rules.text.utf8)
        // Read back as any replica will read it: a rule that does not survive its own text is refused here.
        guard try FieldRules(parsing: content, name: Routing.fieldsKey.rawValue).text == rules.text else {
            throw .invalidRoute(Routing.fieldsKey.rawValue, reason: "a rule's documents or field holds a space, a tab or a line break")
        }
        return try write(content, of: document, author: author, date: date)
    }

    /// Saves `content` as `.truce/fields` on `document`'s current version, after reading it as a replica will; nil when
    /// it holds these bytes already.
    private func write(_ content: Data, of document: RoutingDocument, author: String, date: Date) throws(TruceError) -> Version? {
        _ = try FieldRules(parsing: content, name: Routing.fieldsKey.rawValue)
        guard document.heads <= 1 else {
            throw .invalidRoute(Routing.fieldsKey.rawValue, reason: "it is in conflict (\(document.heads) heads); resolve it first")
        }
        guard content != document.content || document.current == nil else { return nil }
        let save = BatchSave(key: Routing.fieldsKey, content: content, device: author, date: date, base: document.current?.id)
        let ids = try access.saveBatch([save], author: author, allowingFutureDates: false, cancellation: nil, progress: nil)
        return try access.read { session in try session.version(ids[0].hex, of: Routing.fieldsKey) }
    }
}

/// A routing document as `route` found it: its current version (nil when absent), that version's bytes, its number of heads.
private struct RoutingDocument: Sendable {
    let key: DocumentKey
    let current: Version?
    let content: Data
    let heads: Int

    init(_ key: DocumentKey, in session: ReadSession) throws {
        let versions = try session.versions(of: key)
        self.key = key
        current = versions.current
        content = try versions.current.flatMap { try session.contents(of: $0) } ?? Data()
        heads = versions.heads.count
    }

}
