import Foundation

/// The store opened with every built-in resolver, for an app that names none: what `import Truce` gives.
extension DocumentStore {
    /// Opens the store in `directory` with the standard resolvers, creating it when `mode` says so (see
    /// `init(directory:device:resolvers:mode:saveLog:syncEnvironment:)`); calls without `device:` are by `device`, and
    /// syncs without `environment:` use `syncEnvironment`.
    public convenience init(
        directory: URL, device: String? = nil, mode: OpeningMode = .openOrCreate, saveLog: Bool = true, syncEnvironment: SyncEnvironment = .empty
    ) throws(TruceError) {
        try self.init(directory: directory, device: device, resolvers: .standard, mode: mode, saveLog: saveLog, syncEnvironment: syncEnvironment)
    }
}

// 0.1.0's ways to open a store, which gave no resolvers: kept for one release (CHANGELOG.md, 0.2.0). A store opened
// by any of them has the standard resolvers, so a call that names no registry cannot run an app's own resolver, and
// its saves go through the save log, which plain git sees at the next checkpoint.
extension DocumentStore {
    /// Opens the store at `url`, creating it when the directory is missing or empty, with the standard resolvers.
    @available(
        *, deprecated,
        message:
            "use `try DocumentStore(directory: url, device: device)`, synchronous; pass `resolvers:` for an app's own resolvers, and call `checkpoint()` before reading the store with plain git"
    )
    public convenience init(at url: URL, device: String) async throws(TruceError) {
        try self.init(directory: url, device: device, resolvers: .standard, mode: .openOrCreate)
    }

    /// Creates a store in a new or empty directory with the standard resolvers.
    @available(
        *, deprecated,
        message:
            "use `try DocumentStore(directory: URL(fileURLWithPath: path), device: device, mode: .createNew)`; pass `resolvers:` for an app's own resolvers, and `saveLog: false` for saves that plain git sees at once"
    )
    public static func create(at path: String, device: String? = nil, saveLog: Bool = true) throws(TruceError) -> DocumentStore {
        // The deprecated path form beneath keeps `path` as given, as 0.1.0 did.
        try create(at: path, device: device, saveLog: saveLog, resolvers: .standard)
    }

    /// Opens an existing store with the standard resolvers.
    @available(
        *, deprecated,
        message:
            "use `try DocumentStore(directory: URL(fileURLWithPath: path), device: device, mode: .openExisting)`; pass `resolvers:` for an app's own resolvers, and call `checkpoint()` before reading the store with plain git"
    )
    public static func open(at path: String, device: String? = nil) throws(TruceError) -> DocumentStore {
        try open(at: path, device: device, resolvers: .standard)
    }
}
