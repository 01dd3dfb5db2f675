import Foundation
import TruceCore

/// A real store on disk holding a fixture's conflict, for integration tests: `resolve`, `explain`, `sync`, plain `git`.
///
/// Made by `ConflictFixture.makeStore()`. A store made in a temporary
/// directory is removed with the value, so keep the value while the store is in use.
public final class FabricatedStore: Sendable {
    /// The store, open.
    public let store: DocumentStore
    /// The document in conflict.
    public let key: DocumentKey
    /// The base version; nil for unrelated histories.
    public let base: Version?
    /// The heads as the store reads them: the current version and the conflict versions, newest first.
    public let versions: DocumentVersions
    /// The directory removed with the value; nil for a store made at a path the caller chose.
    private let temporaryDirectory: String?

    /// The store's directory: a bare git repository that `git -C PATH …` reads.
    public var path: String { store.path }
    /// The head the current-version rule picks.
    public var current: Version { versions.current! }
    /// The other heads of distinct content, newest first.
    public var conflicts: [Version] { versions.conflicts }

    init(store: DocumentStore, key: DocumentKey, base: Version?, versions: DocumentVersions, temporaryDirectory: String?) {
        self.store = store
        self.key = key
        self.base = base
        self.versions = versions
        self.temporaryDirectory = temporaryDirectory
    }

    deinit {
        if let temporaryDirectory { try? FileManager.default.removeItem(atPath: temporaryDirectory) }
    }
}

/// The versions `ConflictFixture.write(into:)` saved, as the store reads them back.
public struct FixtureVersions: Sendable {
    /// The version the fixture's `base` saved; nil for unrelated histories.
    public let base: Version?
    /// The version the fixture's `current` saved: the current version.
    public let current: Version
    /// The versions the fixture's `conflicts` saved, in the fixture's order.
    public let conflicts: [Version]
}

extension ConflictFixture {
    /// Writes the fixture into a new store, in a new temporary directory (`path` nil) or at `path` (a new or empty directory).
    ///
    /// The base, then every head saved from it, each version's committer date
    /// its author date, so the commit ids are the same on every run and
    /// machine. Without a base each head is saved in a store of its own and
    /// synced in, as unrelated histories arrive. The store is an ordinary one:
    /// `git fsck --strict` is clean, and later writes (`route`, `resolve`) are
    /// dated now, as anywhere. The store's resolvers are `resolvers` (the
    /// fixture's resolver tests name them per call as well).
    public func makeStore(at path: String? = nil, resolvers: ResolverRegistry = ResolverRegistry()) throws -> FabricatedStore {
        try checkShape()
        let temporary =
            path == nil
            ? FileManager.default.temporaryDirectory.appendingPathComponent("truce-fixture-\(UUID().uuidString)").path : nil
        do {
            let root = temporary ?? URL(fileURLWithPath: path!).deletingLastPathComponent().path
            let store = try DocumentStore(directory: URL(fileURLWithPath: path ?? temporary! + "/store"), resolvers: resolvers, mode: .createNew)
            let written = try write(into: store, sideStoresIn: root)
            return FabricatedStore(store: store, key: key, base: written.base, versions: try store.versions(of: key), temporaryDirectory: temporary)
        } catch {
            if let temporary { try? FileManager.default.removeItem(atPath: temporary) }
            throw error
        }
    }

    /// Writes the fixture's versions into `store`, an open store of the caller's, as `makeStore()` writes them into a
    /// new one; returns them.
    ///
    /// For a test that sets up the store itself first (its routing, its
    /// config, other documents) or puts several conflicts in one store. The
    /// base is written first, then the current version, then the conflict
    /// versions in the fixture's order. The base is saved as any save without
    /// a base is: on the document's current version when `store` holds one,
    /// which is then its parent. A fixture
    /// without a base needs the document absent from `store`, for its heads
    /// to be unrelated histories; the stores its heads are synced in from are
    /// made in a temporary directory and removed.
    public func write(into store: DocumentStore) throws -> FixtureVersions {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("truce-fixture-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        return try write(into: store, sideStoresIn: root)
    }

    /// `write(into:)`, the stores of a fixture without a base made in `root`.
    private func write(into store: DocumentStore, sideStoresIn root: String) throws -> FixtureVersions {
        try checkShape()
        let heads = [current] + conflicts
        func save(_ spec: FixtureVersion, base: VersionID?) -> BatchSave {
            BatchSave(key: key, content: spec.content, device: spec.device, date: spec.date, base: base, committerDate: spec.date)
        }
        // A fixture's dates are what its author chose, in the future too.
        var baseID: VersionID?
        var headIDs: [VersionID]
        if let base {
            baseID = try store.saveBatchOnCallingThread([save(base, base: nil)], allowingFutureDates: true)[0]
            headIDs = try store.saveBatchOnCallingThread(heads.map { save($0, base: baseID) }, allowingFutureDates: true)
        } else {
            headIDs = try store.saveBatchOnCallingThread([save(heads[0], base: nil)], allowingFutureDates: true)
            for (index, head) in heads.dropFirst().enumerated() {
                let side = try DocumentStore(
                    directory: URL(fileURLWithPath: root + "/truce-fixture-side-\(index)-\(UUID().uuidString)"), resolvers: store.resolvers,
                    mode: .createNew)
                defer { try? FileManager.default.removeItem(atPath: side.path) }
                headIDs += try side.saveBatchOnCallingThread([save(head, base: nil)], allowingFutureDates: true)
                _ = try store.syncOnCallingThread(with: side.path)
            }
        }
        func read(_ id: VersionID) throws(TruceError) -> Version { try store.version(id.hex, of: key) }
        return FixtureVersions(base: try baseID.map(read), current: try read(headIDs[0]), conflicts: try headIDs.dropFirst().map(read))
    }
}
