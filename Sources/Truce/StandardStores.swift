import Foundation

/// The store opened with every built-in resolver, for an app that names none: what `import Truce` gives.
extension DocumentStore {
    /// Opens the store at `url`, creating it when the directory is missing or empty, with the standard resolvers;
    /// calls without `device:` are by `device`.
    public convenience init(at url: URL, device: String) async throws(TruceError) {
        try await self.init(at: url, device: device, resolvers: .standard)
    }

    /// Creates a store in a new or empty directory with the standard resolvers (see `create(at:device:saveLog:resolvers:)`).
    public static func create(at path: String, device: String? = nil, saveLog: Bool = true) throws(TruceError) -> DocumentStore {
        try create(at: path, device: device, saveLog: saveLog, resolvers: .standard)
    }

    /// Opens an existing store with the standard resolvers (see `open(at:device:resolvers:)`).
    public static func open(at path: String, device: String? = nil) throws(TruceError) -> DocumentStore {
        try open(at: path, device: device, resolvers: .standard)
    }
}
