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
    ///
    /// `syncEnvironment` is what every `sync(with:)` that is given none may
    /// use from the machine to reach a hub over ssh or http(s): keys, known
    /// hosts, a CA file, a password. The library reads no environment
    /// variable, so the default, `.empty`, offers none; pass
    /// `.fromProcess(ProcessInfo.processInfo.environment)` for what `git` and
    /// the `truce` command use (see <doc:Syncing>). It is given at open, as
    /// the device is, because it belongs to the machine and the app, not to
    /// one sync; a sync may still be given another (`environment:`).
    public convenience init(
        directory: URL, device: String? = nil, resolvers: ResolverRegistry, mode: OpeningMode = .openOrCreate, saveLog: Bool = true,
        syncEnvironment: SyncEnvironment = .empty
    ) throws(TruceError) {
        let path = try StoreCreation.prepare(directory, mode: mode, saveLog: saveLog, device: device)
        try self.init(
            opening: path, device: device, resolvers: resolvers, savesThroughLog: nil, syncEnvironment: syncEnvironment,
            instrumentation: StoreInstrumentation())
    }

    /// Opens the store at `path` as `init(directory:device:resolvers:mode:saveLog:syncEnvironment:)` does, the path kept as given
    /// (`self.path`), for the forms that took a path.
    convenience init(path: String, device: String?, resolvers: ResolverRegistry, mode: OpeningMode, saveLog: Bool) throws(TruceError) {
        try StoreCreation.prepare(path, mode: mode, saveLog: saveLog, device: device)
        try self.init(opening: path, device: device, resolvers: resolvers, savesThroughLog: nil, instrumentation: StoreInstrumentation())
    }
}
