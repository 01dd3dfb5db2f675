import Foundation
internal import TruceGit

/// Which resolver applies where, kept in the store as two documents that sync like any other.
///
/// - `.truce/attributes`, in gitattributes syntax (`*.md merge=three-way`),
///   read before the store's local `info/attributes`: a line that matches a
///   key and sets its `merge` attribute decides.
/// - `.truce/config`, in git-config syntax, for `resolver.<name>.<option>`,
///   `merge.default` and `truce.deleteConflict`; these override the store's
///   local config. Anything else in it is ignored: in particular an external
///   driver's command (`merge.<name>.driver`) is only ever read from the
///   local config, so no replica can make another run a program.
///
/// - `.truce/fields`, one merge rule of a JSON field a line (`FieldRules`),
///   read after the store's local `info/fields`, so its rules decide.
///
/// All are read from their current version, so every replica that has the
/// same versions decides alike.
struct Routing: Sendable {
    static let attributesKey: DocumentKey = ".truce/attributes"
    static let configKey: DocumentKey = ".truce/config"
    /// The synced merge rules of JSON fields (`FieldRules`), read after the store's local `info/fields`.
    static let fieldsKey: DocumentKey = ".truce/fields"

    let attributes: AttributesFile?
    /// The synced config's entries that may override local ones, names lowercased as git does.
    let config: [String: String]
    /// The rules `.truce/fields` holds.
    var fields = FieldRules()

    /// Whether a synced config entry may override the local one.
    static func isSyncable(_ name: String) -> Bool {
        name == "merge.default" || name == "truce.deleteconflict" || name == "rerere.enabled" || name == "gc.rerereresolved"
            || name == "gc.rerereunresolved"
            || (name.hasPrefix("resolver.") && name.split(separator: ".", omittingEmptySubsequences: false).count == 3)
    }

    /// Reads the routing documents at these versions (nil: that document routes nothing).
    static func read(
        attributes attributesVersion: Version?, config configVersion: Version?, fields fieldsVersion: Version?, in engine: StoreEngine
    ) throws -> Routing {
        let attributes = try attributesVersion.flatMap { try engine.contents(of: $0) }
            .map { data throws(TruceError) in try AttributesFile(data, name: attributesKey.rawValue) }
        var config: [String: String] = [:]
        if let data = try configVersion.flatMap({ try engine.contents(of: $0) }) {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("truce-routing-\(UUID().uuidString).config")
            try data.write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let entries: [ConfigEntry]
            do { entries = try Repository.configEntries(inFile: file.path) } catch {
                throw TruceError.invalidConfiguration("\(configKey): \(error.message)")
            }
            for entry in entries where isSyncable(entry.name) { config[entry.name] = entry.value }
        }
        let fields = try fieldsVersion.flatMap { try engine.contents(of: $0) }
            .map { data throws(TruceError) in try FieldRules(parsing: data, name: fieldsKey.rawValue) }
        return Routing(attributes: attributes, config: config, fields: fields ?? FieldRules())
    }
}

extension ReadSession {
    /// The synced routing, parsed again only when a routing document has a new current version.
    ///
    /// `resolveAll` asks once per document; reading the two heads directories is cheap, parsing is not.
    func routing() throws -> Routing {
        let attributes = try versions(of: Routing.attributesKey).current
        let config = try versions(of: Routing.configKey).current
        let fields = try versions(of: Routing.fieldsKey).current
        let versions = [attributes?.id, config?.id, fields?.id]
        if let cached = engine.routingCache.routing(for: versions) { return cached }
        let routing = try Routing.read(attributes: attributes, config: config, fields: fields, in: engine)
        engine.routingCache.keep(routing, for: versions)
        return routing
    }
}
