import Foundation
internal import TruceCrypto
internal import TruceGit

/// This store's side of one encrypted hub: a bare repository in the store's git directory
/// (`truce-hubs/<digest of the remote>.git`) that holds the hub's sealed entries and, opened, the plain objects and
/// replica manifests they carry.
///
/// A sync with an encrypted hub is a sync with this repository, as with a
/// hub on a local path, between two steps: first every new sealed entry on
/// the hub is checked and opened into it; then what the sync sends is
/// sealed as one entry of this replica's chain, opened here the same way,
/// and pushed to the hub. Objects reach this repository only by opening
/// sealed entries, so it holds exactly what the hub's entries carry, and
/// what this replica sends next is what they lack. It also remembers what
/// was read of each replica (`refs/opened/<slot>`): a hub that later shows
/// less is caught. Everything in it can be fetched again except that memory.
final class EncryptedHubCache {
    let remote: String
    let repository: Repository
    let environment: TransferEnvironment

    static let hubRoot = "refs/truce/sealed/"
    static let keyRingReference = hubRoot + "keyring"
    static let replicasRoot = hubRoot + "replicas/"
    static let joinsRoot = hubRoot + "joins/"
    /// This replica's chain as written here; the hub's copy may lag until a push goes through.
    static let ownChainRoot = "refs/sealed/replicas/"
    static let ownKeyRing = "refs/sealed/keyring"
    /// The last entry of each slot checked and opened here, and the last key ring entry read.
    static let openedRoot = "refs/opened/replicas/"
    static let openedKeyRing = "refs/opened/keyring"
    /// The last entry of this replica the hub took.
    static let acknowledgedRoot = "refs/acknowledged/"
    static let foundingConfig = "truce.founding"

    static func directory(of remote: String, in store: Repository) -> String {
        let digest = Digest.blake2b(Array(remote.utf8)).prefix(16).map { String(format: "%02x", $0) }.joined()
        return store.gitDirectory + "truce-hubs/" + digest + ".git"
    }

    /// Whether this store syncs with `remote` as an encrypted hub (it founded or joined it).
    static func isEncrypted(_ remote: String, in store: Repository) -> Bool {
        FileManager.default.fileExists(atPath: directory(of: remote, in: store) + "/config")
    }

    /// Held from opening to release: one process at a time reads and writes the cache.
    private let lock: SyncLock
    /// What was read of each slot, as `state(ofSlot:)` last read or `openChain` last moved it (nil: none read).
    var openedStates: [String: SlotState?] = [:]

    /// The cache at `repository`, locked; every lock file in it then is one a killed sync left, and goes.
    private init(remote: String, repository: Repository, environment: TransferEnvironment) throws {
        (self.remote, self.repository, self.environment) = (remote, repository, environment)
        lock = try SyncLock.acquire(file: repository.gitDirectory + "truce-lock", holder: "another sync is using this encrypted hub's cache")
        for relative in DirectoryWalk.files(under: repository.gitDirectory) where relative.hasSuffix(".lock") {
            unlink(repository.gitDirectory + relative)
        }
    }

    deinit { lock.release() }

    /// The cache of `remote`, which this store founded or joined.
    static func open(_ remote: String, in store: Repository, environment: TransferEnvironment) throws -> EncryptedHubCache {
        try EncryptedHubCache(
            remote: remote, repository: try Repository.openBare(at: directory(of: remote, in: store)), environment: environment)
    }

    /// A new cache for `remote`; fails when this store has one.
    static func create(_ remote: String, in store: Repository, environment: TransferEnvironment) throws -> EncryptedHubCache {
        guard !isEncrypted(remote, in: store) else {
            throw TruceError.invalidRemote(remote, reason: "this store already syncs with it as an encrypted hub")
        }
        let path = directory(of: remote, in: store)
        try? FileManager.default.removeItem(atPath: path)
        return try EncryptedHubCache(remote: remote, repository: try Repository.createBare(at: path), environment: environment)
    }

    /// Removes a cache that never became usable (a founding or joining that failed).
    func discard() { try? FileManager.default.removeItem(atPath: repository.path) }

    func failure(_ reason: String) -> TruceError { .invalidRemote(remote, reason: reason) }

    // MARK: Fetching

    /// The hub's sealed references, with every object they reach fetched here; refuses a hub that holds anything in
    /// the clear: an encrypted hub never takes plain versions, and this store never sends them to one.
    func fetch(progress: ((TransferCounts) -> Void)? = nil, cancellation: Cancellation? = nil) throws -> [String: ObjectID] {
        let advertised: [(name: String, target: ObjectID)]
        do {
            advertised = try repository.fetch(
                from: remote, refsMatching: "refs/truce/*",
                wanting: { [repository] advertised throws(GitError) in
                    var wanted: [String] = []
                    for reference in advertised where reference.name.hasPrefix(Self.hubRoot) {
                        if try !repository.containsCommit(reference.target) { wanted.append(reference.name) }
                    }
                    return wanted
                }, environment: environment, progress: progress, cancellation: cancellation)
        } catch  where cancellation?.isCancelled == true {
            throw TruceError.cancelled
        } catch {
            throw failure(error.message)
        }
        if let plain = advertised.first(where: { !$0.name.hasPrefix(Self.hubRoot) }) {
            throw failure("it holds \(plain.name) in the clear; an encrypted hub holds sealed entries only")
        }
        return Dictionary(advertised.map { ($0.name, $0.target) }, uniquingKeysWith: { first, _ in first })
    }

    /// Pushes `updates` (`local:remote` pairs) to the hub, never forced: a hub whose reference moved meanwhile refuses.
    func push(
        _ updates: [(local: String, remote: String)], deleting: [String] = [], progress: ((TransferCounts) -> Void)? = nil,
        cancellation: Cancellation? = nil
    ) throws {
        // A push into a hub on a local path that was killed left its ref locks there: taken over once stale.
        if let path = SyncSession.localPath(of: remote), let hub = try? Repository.openBare(at: path) {
            for name in updates.map(\.remote) + deleting { StaleLocks.removeIfStale(hub.gitDirectory + name + ".lock") }
        }
        do {
            try repository.push(
                refspecs: updates.map { "\($0.local):\($0.remote)" } + deleting.map { ":" + $0 }, to: remote, environment: environment,
                progress: progress, cancellation: cancellation)
        } catch  where cancellation?.isCancelled == true {
            throw TruceError.cancelled
        } catch  where error.message.contains("failed to lock file") {
            // Another push holds the ref, or one killed moments ago left its lock: either way, a retry goes through.
            throw TruceError.busy(error.message)
        } catch {
            throw failure("it refused our push: \(error.message)")
        }
    }

    // MARK: The key ring

    /// The hub's key ring as its entries leave it, each checked: a chain from the entry this store pinned, signed by
    /// members, never behind what was read here before.
    func readKeyRing(at tip: ObjectID?) throws -> HubKeyRing {
        guard let tip else { throw failure("it holds no key ring: it is not an encrypted hub (found one with 'truce hub encrypt')") }
        if let opened = try repository.reference(Self.openedKeyRing), opened != tip, try !repository.isDescendant(tip, of: opened) {
            throw failure("its key ring is not the one read here before: it was rolled back or replaced")
        }
        var ring = HubKeyRing()
        var previous: ObjectID?
        for commit in try repository.walk(from: [tip], oldestFirst: true) {
            let record = try repository.readCommit(commit)
            guard record.parents == (previous.map { [$0] } ?? []) else { throw failure("its key ring is not one chain of entries") }
            guard let entry = try repository.entry(at: "entry", inTree: record.tree), !entry.isTree else {
                throw failure("its key ring commit \(commit.short) holds no entry")
            }
            do {
                try ring.apply([UInt8](try repository.readBlob(entry.id)))
            } catch let error as HubFormatError {
                throw failure("its key ring is not to be trusted: \(error.reason)")
            }
            previous = commit
        }
        let founding = ring.foundingDigest.map(Self.hex) ?? ""
        if let pinned = try repository.configEntries().last(where: { $0.name == Self.foundingConfig })?.value {
            guard pinned == founding else { throw failure("its key ring was founded by another store than the one this store joined") }
        } else {
            try repository.setConfig(Self.foundingConfig, to: founding)
        }
        try move(Self.openedKeyRing, to: tip)
        return ring
    }

    /// Writes `entry`, signed by `device`, as the key ring's next commit after `tip`, and pushes it.
    func appendToKeyRing(_ entry: KeyRingEntry, after tip: ObjectID?, signedBy device: SigningKeyPair, deleting: [String] = []) throws {
        let blob = try repository.writeBlob(Data(entry.encoded(signedBy: device)))
        let tree = try repository.writeTree([TreeEntry(name: "entry", id: blob, isTree: false)])
        let commit = try repository.writeCommit(
            tree: tree, parents: tip.map { [$0] } ?? [], author: SealedEntry.signature, committer: SealedEntry.signature,
            message: "Key ring entry \(entry.sequence)\n")
        try move(Self.ownKeyRing, to: commit)
        try push([(Self.ownKeyRing, Self.keyRingReference)], deleting: deleting)
    }

    /// Points `name` at `target`, whatever it pointed at: the cache is written under the sync lock alone.
    func move(_ name: String, to target: ObjectID) throws {
        let current = try repository.reference(name)
        guard current != target else { return }
        try repository.updateReference(name, to: target, expecting: current, message: "truce: encrypted hub")
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// The store's fingerprint people compare when a device joins: 16 hex digits of the founding entry's digest.
    func storeFingerprint() throws -> String {
        let founding = try repository.configEntries().last(where: { $0.name == Self.foundingConfig })?.value ?? ""
        return stride(from: 0, to: 16, by: 4).map { String(founding.dropFirst($0).prefix(4)) }.joined(separator: "-")
    }
}
