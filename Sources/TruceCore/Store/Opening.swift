import Foundation

/// Opening a store: one synchronous initializer, whatever the directory holds.
extension DocumentStore {
    /// What `DocumentStore(directory:device:resolvers:mode:saveLog:)` does with its directory.
    public enum OpeningMode: Sendable, Hashable {
        /// Opens the store in the directory, creating one when the directory is missing or empty (or holds a creation
        /// that was cut short). A directory that holds anything else is `TruceError.notAStore`: nothing is created in it.
        case openOrCreate
        /// Opens the store in the directory: `TruceError.storeNotFound` when it is missing, `.notAStore` when it holds
        /// something else.
        case openExisting
        /// Creates a store in a new or empty directory and opens it: `TruceError.storeExists` when the directory holds
        /// anything.
        case createNew
    }

    /// Opens the store in `directory`, creating it when `mode` says so; calls that name no device are by `device`,
    /// and calls that name no registry use `resolvers`.
    ///
    /// The one way to open a store, and synchronous, as every quick local
    /// call is (see <doc:Concurrency>): it reads the store's config and
    /// lands what a killed writer left in the save log. `device` is
    /// validated here (`TruceError.invalidDeviceName`); without one, calls
    /// use the host name (`defaultDevice`). `saveLog` is for a store this
    /// call creates: its saves go through the store's save log (see
    /// <doc:SavingAndTheSaveLog>) unless it is false, which the store's
    /// config then records. An existing store keeps its own config
    /// (`truce.saveLog`, on unless set to false). A creation that fails
    /// removes what it made; one that was killed or cut by a power loss is
    /// started again.
    ///
    /// ```swift
    /// let store = try DocumentStore(directory: URL(fileURLWithPath: "/tmp/notes-store"), device: "laptop", resolvers: registry)
    /// ```
    ///
    /// With `import Truce`, `resolvers` may be left out: the store then has
    /// every built-in resolver (`ResolverRegistry.standard`).
    public convenience init(
        directory: URL, device: String? = nil, resolvers: ResolverRegistry, mode: OpeningMode = .openOrCreate, saveLog: Bool = true
    ) throws(TruceError) {
        guard directory.isFileURL else {
            throw .notAStore(directory.absoluteString, reason: "a store is a local directory, and this URL is not a file URL")
        }
        try self.init(path: directory.path, device: device, resolvers: resolvers, mode: mode, saveLog: saveLog)
    }

    /// Opens the store at `path` as `init(directory:device:resolvers:mode:saveLog:)` does, the path kept as given
    /// (`self.path`), for the forms that took a path.
    convenience init(path: String, device: String?, resolvers: ResolverRegistry, mode: OpeningMode, saveLog: Bool) throws(TruceError) {
        let device = try device.map { name throws(TruceError) in try DeviceName.validated(name) }
        switch mode {
        case .openOrCreate:
            let contents = try? FileManager.default.contentsOfDirectory(atPath: path)
            if contents?.isEmpty ?? !FileManager.default.fileExists(atPath: path) || StoreCreation.isInterrupted(at: path) {
                do { try StoreEngine.create(at: path, saveLog: saveLog) } catch .storeExists {
                    // Another writer created it meanwhile: open theirs.
                }
            }
        case .openExisting:
            break
        case .createNew:
            try StoreEngine.create(at: path, saveLog: saveLog)
        }
        try self.init(opening: path, device: device, resolvers: resolvers, savesThroughLog: nil, instrumentation: StoreInstrumentation())
    }
}
