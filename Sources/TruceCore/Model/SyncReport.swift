import Foundation
internal import TruceGit

/// What one `sync` exchanged.
public struct SyncReport: Sendable, Codable {
    /// Versions this store did not have before, oldest first.
    ///
    /// Made from a compact list each time it is read (a first sync of a
    /// million documents would otherwise hold a million entries to its end):
    /// keep it in a local to read it more than once.
    public var received: [Change] { receivedChanges.all }
    /// How many versions `received` lists, without making them.
    public var receivedCount: Int { receivedChanges.count }
    let receivedChanges: ChangeList
    /// Versions the other store did not have before (for a store Truce can open; otherwise the heads pushed).
    public let sent: Int
    /// Documents in conflict here after the sync (and after resolving, with `resolving`).
    public let inConflict: [DocumentKey]
    /// Heads of the other store this store refused: they, or the history they bring, fail git's or Truce's checks.
    public let refused: [SyncReport.RefusedHead]
    /// Heads of this store the other store refused (for a store Truce can open).
    public let refusedByRemote: [SyncReport.RefusedHead]
    /// With `resolving`: the documents the sync left in conflict that a resolver settled here.
    public var resolved: [DocumentKey] = []
    /// With `resolving`: the documents that still need a person.
    public var needsPerson: [DocumentKey] = []
    /// Objects and bytes received and sent, and documents adopted.
    public var traffic = SyncReport.Traffic()
    /// The remote as messages show it: its URL without a password.
    public var remote = ""

    init(received: ChangeList, sent: Int, inConflict: [DocumentKey], refused: [RefusedHead], refusedByRemote: [RefusedHead]) {
        receivedChanges = received
        self.sent = sent
        self.inConflict = inConflict
        self.refused = refused
        self.refusedByRemote = refusedByRemote
    }

    /// The compact list is written and read as `received` (`ChangeList` encodes as its changes).
    private enum CodingKeys: String, CodingKey {
        case sent, inConflict, refused, refusedByRemote, resolved, needsPerson, traffic, remote
        case receivedChanges = "received"
    }
}

extension SyncReport {
    /// What one sync moved over the wire, and what it adopted.
    public struct Traffic: Sendable, Codable, Equatable {
        /// Objects and bytes received from the other side.
        public var receivedObjects = 0, receivedBytes = 0
        /// Objects and bytes sent to the other side.
        public var sentObjects = 0, sentBytes = 0
        /// Documents that gained versions here.
        public var documentsAdopted = 0
        /// Heads the other side listed that were checked so far, of those to check (0 of 0 until the checks start):
        /// after the download, the longest step of a first sync.
        public var headsChecked = 0, headsToCheck = 0
        /// Objects written into this store so far, of those to write, once the checks passed (0 of 0 when what arrived
        /// joins the store as it came, or nothing did).
        public var objectsStored = 0, objectsToStore = 0

        /// Nothing moved yet.
        package init() {}

        /// Reads a traffic record; one written before a field existed reads it as 0.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            func count(_ key: CodingKeys) throws -> Int { try container.decodeIfPresent(Int.self, forKey: key) ?? 0 }
            (receivedObjects, receivedBytes) = (try count(.receivedObjects), try count(.receivedBytes))
            (sentObjects, sentBytes) = (try count(.sentObjects), try count(.sentBytes))
            documentsAdopted = try count(.documentsAdopted)
            (headsChecked, headsToCheck) = (try count(.headsChecked), try count(.headsToCheck))
            (objectsStored, objectsToStore) = (try count(.objectsStored), try count(.objectsToStore))
        }
    }
}

extension SyncReport {
    /// A head another store advertised that this store refused, and why: a document's version, or a replica's manifest.
    ///
    /// Exactly one of `version` and `manifest` is set: a manifest is not a
    /// version (it is a commit with an empty tree that lists other replicas'
    /// heads), so its id is never given as one.
    public struct RefusedHead: Sendable, Codable, Equatable {
        /// The refused version, when the head is a document's; nil when a replica's manifest was refused.
        public let version: VersionID?
        /// The refused manifest, when the head is a replica's manifest (its whole chain is then refused); nil for a version.
        public let manifest: SyncReport.ManifestID?
        /// The reference the other store advertised it under.
        public let reference: String
        /// What is wrong with it or with the history it brings, in words.
        public let reason: String

        /// The id of what was refused, version or manifest, as git prints it.
        public var hex: String { version?.hex ?? manifest?.hex ?? "" }

        /// A refused version.
        init(version: VersionID, reference: String, reason: String) {
            (self.version, manifest, self.reference, self.reason) = (version, nil, reference, reason)
        }

        /// A refused manifest.
        init(manifest: SyncReport.ManifestID, reference: String, reason: String) {
            (version, self.manifest, self.reference, self.reason) = (nil, manifest, reference, reason)
        }
    }
}

extension SyncReport {
    /// The id of a replica's manifest commit: its own type, so that it never passes for a ``VersionID``.
    public struct ManifestID: Hashable, Sendable, Codable, CustomStringConvertible {
        /// The commit's id, for the git layer.
        let objectID: ObjectID

        init(_ objectID: ObjectID) {
            self.objectID = objectID
        }

        /// The 40-character lowercase hexadecimal form that git prints.
        public var hex: String { objectID.hex }

        public var description: String { objectID.hex }

        public init(from decoder: Decoder) throws {
            objectID = try ObjectID(from: decoder)
        }

        public func encode(to encoder: Encoder) throws {
            try objectID.encode(to: encoder)
        }
    }
}
