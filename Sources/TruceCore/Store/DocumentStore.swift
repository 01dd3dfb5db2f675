import Foundation
import Synchronization
internal import TruceGit
internal import TruceSaveLog

/// A store of documents and all their versions: a bare git repository that plain `git` can read.
///
/// `DocumentStore` is the facade an app calls: each method is a few lines
/// over a read or write session (`StoreAccess`, the one way into the
/// store) or over one use case of the engine (resolving, routing, import and
/// export, restore, a person's sessions, recorded answers, sync), which hold
/// the policy. It is safe to share between tasks and threads. Several
/// processes may write the same store at once; reference updates are
/// compare-and-swap, so no acknowledged version is lost.
///
/// See <doc:Concurrency> for which calls are synchronous and which are `async`.
public final class DocumentStore: Sendable {
    /// The store directory.
    public let path: String
    /// The device a call that names none saves, resolves and syncs as: the one given at open, already validated.
    ///
    /// nil when none was given: such calls then use the host name (`defaultDevice`).
    public let device: String?
    /// The resolvers the store's config may name, given at open; every resolving call may pass another registry.
    public let resolvers: ResolverRegistry
    /// True when saves go through the store's save log (`truce.saveLog`, on unless set to false), read at open.
    public var savesThroughLog: Bool { access.savesThroughLog }
    /// What a sync that is given none may use from the machine to reach a hub over ssh or http(s), given at open.
    let syncEnvironment: SyncEnvironment
    /// The one way into the store: its sessions.
    let access: StoreAccess
    /// The counters and fault points tests watch.
    package let instrumentation: StoreInstrumentation

    /// Opens a store for the package's own tools and tests: `savesThroughLog` overrides the store's config for this
    /// object (nil keeps it), and `instrumentation` is what tests watch and steer.
    package static func open(
        at path: String, device: String? = nil, resolvers: ResolverRegistry = ResolverRegistry(), savesThroughLog: Bool? = nil,
        syncEnvironment: SyncEnvironment = .empty, instrumentation: StoreInstrumentation
    ) throws(TruceError) -> DocumentStore {
        try DocumentStore(
            opening: path, device: device, resolvers: resolvers, savesThroughLog: savesThroughLog, syncEnvironment: syncEnvironment,
            instrumentation: instrumentation)
    }

    init(
        opening path: String, device: String?, resolvers: ResolverRegistry, savesThroughLog: Bool?, syncEnvironment: SyncEnvironment = .empty,
        instrumentation: StoreInstrumentation
    ) throws(TruceError) {
        self.device = try device.map(DeviceName.validated)
        access = try StoreAccess(opening: path, savesThroughLog: savesThroughLog, instrumentation: instrumentation.counters)
        self.path = path
        self.resolvers = resolvers
        self.syncEnvironment = syncEnvironment
        self.instrumentation = instrumentation
    }

    /// The device of a call that names none, on a store opened without one: this machine's host name.
    ///
    /// The library reads no environment variable; the `truce` command line
    /// passes `$TRUCE_DEVICE` as the device when it is set.
    public static var defaultDevice: String { ProcessInfo.processInfo.hostName }

    /// The author name for a call's `device`: the one given, else the store's, else `defaultDevice`; validated.
    ///
    /// The one rule every public method that takes `device: String? = nil` follows.
    func author(_ given: String?) throws(TruceError) -> String {
        try DeviceName.validated(given ?? device ?? Self.defaultDevice)
    }

    /// The resolving use case over `registry`, the store's resolvers when nil.
    func resolving(_ registry: ResolverRegistry? = nil) -> Resolving {
        Resolving(access: access, registry: registry ?? resolvers)
    }
}
