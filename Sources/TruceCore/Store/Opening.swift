import Foundation

/// Opening a store: one synchronous initializer, whatever the directory holds.
extension DocumentStore {
    /// What `DocumentStore(directory:device:resolvers:mode:saveLog:)` does with its directory.
    public typealias OpeningMode = StoreOpeningMode

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
        let path = try StoreCreation.prepare(directory, mode: mode, saveLog: saveLog, device: device)
        try self.init(opening: path, device: device, resolvers: resolvers, savesThroughLog: nil, instrumentation: StoreInstrumentation())
    }

    /// Opens the store at `path` as `init(directory:device:resolvers:mode:saveLog:)` does, the path kept as given
    /// (`self.path`), for the forms that took a path.
    convenience init(path: String, device: String?, resolvers: ResolverRegistry, mode: OpeningMode, saveLog: Bool) throws(TruceError) {
        try StoreCreation.prepare(path, mode: mode, saveLog: saveLog, device: device)
        try self.init(opening: path, device: device, resolvers: resolvers, savesThroughLog: nil, instrumentation: StoreInstrumentation())
    }
}
