import Foundation
import TruceCore

/// One version of a fixture: its bytes (nil for a deletion), the device that saved it, and when.
public struct FixtureVersion: Sendable {
    /// The bytes of the version; nil for a deletion.
    public let content: Data?
    /// The device name, as `save(_:to:device:)` takes it.
    public let device: String
    /// The author date; a store keeps it to the second.
    public let date: Date

    /// A version holding `content` (nil: a deletion).
    public init(data content: Data?, device: String, date: Date) {
        self.content = content
        self.device = device
        self.date = date
    }

    /// A version holding the UTF-8 bytes of `text`.
    public init(_ text: String, device: String, date: Date) {
        self.init(data: Data(text.utf8), device: device, date: date)
    }

    /// A deletion of the document.
    public static func deletion(device: String, date: Date) -> FixtureVersion {
        FixtureVersion(data: nil, device: device, date: date)
    }
}

/// What a fixture cannot be, because no store would hold that conflict.
public enum FixtureError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A conflict version is as recent as the current version or more, so the store would not make `current` current.
    case currentIsNotLatest(current: Date, conflict: Date)
    /// A deletion with nothing to delete: a base that is a deletion, or a deleted head without a base.
    case deletionWithoutDocument
    /// The delete-conflict policy settles this conflict alone: no resolver would run.
    case settledByPolicy(DeleteConflictPolicy)

    public var description: String {
        switch self {
        case .currentIsNotLatest(let current, let conflict):
            "a conflict version dated \(conflict) is not older than the current version (\(current)): the store makes the head with "
                + "the latest date current, and on a tie the larger version id, which a fixture does not choose"
        case .deletionWithoutDocument: "a deletion needs a version to delete: the base holds content, and a deleted head needs a base"
        case .settledByPolicy(let policy): "truce.deleteConflict = \(policy.rawValue) settles this conflict before any resolver runs"
        }
    }
}

/// A document in conflict described in a few lines: a base, the current version and the conflict versions.
///
/// `conflictSet()` builds, in memory, the `ConflictSet` that
/// `store.conflictSet(of:)` would read from a store holding these versions:
/// heads in the current-version rule's order, identical heads collapsed into
/// `equivalents`, dates to the second, the base as every step's merge base.
/// `makeStore()` writes those versions into a real store on disk. Both are
/// deterministic: the same fixture gives the same version ids on every run
/// (in memory, ids made from the fixture's fields; on disk, git's own commit
/// ids, since every date of the commits is fixed). The two sets of ids differ.
public struct ConflictFixture: Sendable {
    /// The document in conflict.
    public let key: DocumentKey
    /// The version every head was saved from; nil for unrelated histories (an add/add).
    public let base: FixtureVersion?
    /// The head the current-version rule picks: it must be dated later than every conflict version.
    public let current: FixtureVersion
    /// The other heads, in any order.
    public let conflicts: [FixtureVersion]

    /// A fixture of `key`: `current` and each of `conflicts` saved from `base`.
    public init(key: DocumentKey, base: FixtureVersion?, current: FixtureVersion, conflicts: [FixtureVersion]) {
        self.key = key
        self.base = base
        self.current = current
        self.conflicts = conflicts
    }

    /// 2026-11-30T09:00:00Z plus `minute` minutes: dates that read well in a test.
    public static func date(minute: Int) -> Date {
        Date(timeIntervalSince1970: 1_796_029_200 + TimeInterval(minute) * 60)
    }

    /// The conflict set `store.conflictSet(of:)` would give for these versions, built in memory.
    ///
    /// Throws `TruceError.notInConflict` when every head holds the same
    /// content (the store would report that too), and a `FixtureError` or a
    /// `TruceError` for a fixture no store could hold.
    public func conflictSet() throws -> ConflictSet {
        let versions = try memoryVersions()
        let side = { (version: Version, spec: FixtureVersion) in ConflictSet.Side(version: version, content: spec.content) }
        return ConflictSet(
            key: key, current: side(versions.heads[0].version, versions.heads[0].spec),
            conflicts: versions.heads.dropFirst().map { side($0.version, $0.spec) },
            base: versions.base.map { side($0.version, $0.spec) }, equivalents: versions.equivalents)
    }

    /// The set `resolve` hands a resolver chain: for a delete conflict, what `policy` leaves of it.
    ///
    /// Under modify-wins with several edited heads, those heads only; throws
    /// `FixtureError.settledByPolicy` when the policy settles the conflict alone.
    public func contestedConflictSet(deleteConflict policy: DeleteConflictPolicy = .modifyWins) throws -> ConflictSet {
        let whole = try conflictSet()
        guard whole.isDeleteConflict else { return whole }
        let edited = whole.heads.filter { $0.content != nil }
        guard policy == .modifyWins, edited.count > 1 else { throw FixtureError.settledByPolicy(policy) }
        return ConflictSet(key: key, current: edited[0], conflicts: Array(edited.dropFirst()), base: whole.base)
    }

    /// Runs `resolver` as `resolve` would on this conflict: `options` validated first, then `resolve(_:context:)` on
    /// the contested set, with `context(options:resolverName:timeout:)`'s context.
    ///
    /// The deadline is the context's to read: this call does not enforce it.
    /// The store then checks the output (`.json` must parse, and so on);
    /// `store.resolve(key, using:options:device:dryRun:)` on `makeStore()` runs that check and the timeout too.
    public func resolve(
        with resolver: some Resolver, options: [String: String] = [:],
        deleteConflict policy: DeleteConflictPolicy = .modifyWins
    ) async throws -> ResolutionOutcome {
        let context = try context(options: options, resolverName: resolver.name)
        try resolver.validate(options: context.options)
        return try await resolver.resolve(contestedConflictSet(deleteConflict: policy), context: context)
    }

    /// The context a store would give a resolver of this conflict: `options` as its config lines, the fixture's
    /// versions as the document's history, and a deadline `timeout` seconds from now.
    ///
    /// `history(limit:)` gives the heads and the base, newest first (by the
    /// current-version rule); `content(of:)` their bytes, and throws
    /// `TruceError.versionNotFound` for any other version.
    public func context(
        options: [String: String] = [:], resolverName: String = "fixture", timeout: Double = DocumentStore.defaultResolverTimeout
    ) throws -> ResolutionContext {
        let versions = try memoryVersions()
        // An equivalent holds the bytes of a distinct head by definition; its spec is found by the id it makes.
        let parents = versions.base.map { [$0.version.id] } ?? []
        var specs: [VersionID: FixtureVersion] = [:]
        for spec in [current] + conflicts { specs[try Self.version(of: spec, key: key, parents: parents).id] = spec }
        var sides = (versions.heads.map(\.version) + versions.equivalents).map { (version: $0, content: specs[$0.id]?.content) }
        sides.sort { Self.isMoreCurrent($0.version, $1.version) }
        if let base = versions.base { sides.append((base.version, base.spec.content)) }
        let history = sides
        return ResolutionContext(
            options: ResolverOptions(resolverName: resolverName, values: options), deadline: .now + .seconds(timeout),
            history: { limit in Array(history.prefix(limit).map(\.version)) },
            content: { (version: Version) throws(TruceError) -> Data? in
                guard let found = history.first(where: { $0.version.id == version.id && $0.version.key == version.key }) else {
                    throw TruceError.versionNotFound(version.id.hex)
                }
                return found.content
            })
    }

    /// The fixture's versions as a store would read them: distinct heads current first, equivalents, base.
    private func memoryVersions() throws -> (
        heads: [(version: Version, spec: FixtureVersion)], equivalents: [Version],
        base: (version: Version, spec: FixtureVersion)?
    ) {
        try checkShape()
        let base = try base.map { spec in (version: try Self.version(of: spec, key: key, parents: []), spec: spec) }
        let parents = base.map { [$0.version.id] } ?? []
        var heads: [(version: Version, spec: FixtureVersion)] = []
        for spec in [current] + conflicts {
            let version = try Self.version(of: spec, key: key, parents: parents)
            // The same content, device and date from the same base is the same commit: one head.
            if !heads.contains(where: { $0.version.id == version.id }) { heads.append((version, spec)) }
        }
        heads.sort { Self.isMoreCurrent($0.version, $1.version) }
        var distinct: [(version: Version, spec: FixtureVersion)] = []
        var equivalents: [Version] = []
        for head in heads {
            if distinct.contains(where: { $0.spec.content == head.spec.content }) { equivalents.append(head.version) } else { distinct.append(head) }
        }
        guard distinct.count > 1 else { throw TruceError.notInConflict(key) }
        for index in distinct.indices.dropFirst() {
            let version = distinct[index].version
            distinct[index].version = Version(
                id: version.id, key: key, deviceName: version.deviceName, modificationDate: version.modificationDate,
                isDeletion: version.isDeletion, parents: version.parents, isConflict: true)
        }
        return (distinct, equivalents, base)
    }

    /// Refuses a fixture no store would hold.
    func checkShape() throws {
        let currentDate = current.date.timeIntervalSince1970.rounded(.down)
        if let late = conflicts.first(where: { $0.date.timeIntervalSince1970.rounded(.down) >= currentDate }) {
            throw FixtureError.currentIsNotLatest(current: current.date, conflict: late.date)
        }
        if let base, base.content == nil { throw FixtureError.deletionWithoutDocument }
        if base == nil, ([current] + conflicts).contains(where: { $0.content == nil }) { throw FixtureError.deletionWithoutDocument }
    }

    /// The deterministic current-version rule, as the store applies it: latest author date, then the larger id.
    static func isMoreCurrent(_ lhs: Version, _ rhs: Version) -> Bool {
        lhs.modificationDate != rhs.modificationDate ? lhs.modificationDate > rhs.modificationDate : lhs.id > rhs.id
    }

    /// A version in memory, its id a function of what a commit would record: key, device, date, content and parents.
    static func version(of spec: FixtureVersion, key: DocumentKey, parents: [VersionID]) throws -> Version {
        let device = try deviceName(spec.device)
        let seconds = spec.date.timeIntervalSince1970.rounded(.down)
        guard seconds >= 0, seconds <= TimeInterval(UInt32.max) else { throw TruceError.dateOutOfRange(spec.date) }
        var fields: [UInt8] = Array(key.rawValue.utf8) + [0] + Array(device.utf8) + [0] + Array(String(Int64(seconds)).utf8) + [0]
        fields += spec.content.map { [1] + Array($0) } ?? [2]
        for parent in parents { fields += [0] + rawBytes(of: parent) }
        return Version(
            id: identifier(of: fields), key: key, deviceName: device, modificationDate: Date(timeIntervalSince1970: seconds),
            isDeletion: spec.content == nil, parents: parents)
    }

    /// The 20 bytes a version id's 40 hexadecimal digits spell, as git stores a parent.
    static func rawBytes(of id: VersionID) -> [UInt8] {
        let digits = Array(id.hex.utf8)
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
    }

    /// 20 bytes from `bytes`: five 32-bit FNV-1a lanes with different seeds; stable across runs and platforms.
    static func identifier(of bytes: [UInt8]) -> VersionID {
        let hex = (0..<5).map { lane -> String in
            var hash: UInt32 = 2_166_136_261 ^ (UInt32(lane) &* 0x9E37_79B9)
            for byte in bytes { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
            return String(hash, radix: 16).leftPadded(to: 8)
        }.joined()
        return VersionID(hex: hex)!
    }

    /// The author name a store would record for `device`, or the error `save` would throw.
    static func deviceName(_ device: String) throws(TruceError) -> String {
        let name = device.trimmingCharacters(in: .whitespaces)
        let reason: String? =
            if name.isEmpty { "it is empty" } else if name.utf8.count > 256 {
                "it is longer than 256 bytes"
            } else if name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
                "it contains a control character"
            } else if name.unicodeScalars.contains(where: { $0 == "<" || $0 == ">" }) { "git forbids '<' and '>' in author names" } else { nil }
        if let reason { throw .invalidDeviceName(device, reason: reason) }
        return name
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - utf8.count)) + self }
}

extension ResolutionOutcome {
    /// The content of a `.resolved` outcome; nil for any other outcome, and for a resolution that deletes.
    public var resolvedContent: Data? {
        if case .resolved(let content) = self { content } else { nil }
    }

    /// True for `.resolved(content: nil)`: the conflict settled as a deletion.
    public var resolvesAsDeletion: Bool {
        if case .resolved(nil) = self { true } else { false }
    }

    /// The version a `.kept` outcome keeps; nil for any other outcome.
    public var keptVersion: VersionID? {
        if case .kept(let id) = self { id } else { nil }
    }

    /// The points of a `.needsPerson` outcome; nil for any other outcome.
    public var conflictPoints: [ConflictPoint]? {
        if case .needsPerson(let points) = self { points } else { nil }
    }

    /// The reason of a `.pass` outcome; nil for any other outcome.
    public var passReason: String? {
        if case .pass(let reason) = self { reason } else { nil }
    }
}
