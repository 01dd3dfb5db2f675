internal import CGitShim
internal import CLibgit2
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Re-implements git's pack entries and pack index (version 2), read (gitformat-pack): byte-compatible with git, listed in TruceGit/README.md.
///
/// The whole objects in the packs of an object database, found by id and proven, so that a new pack can take their
/// deflated bytes as they are.
///
/// A first sync from a local store packs each object that store holds.
/// Reading each through libgit2 (inflating it) and deflating it again was
/// most of that sync's time, while the deflated bytes were on disk already.
/// An entry is handed out only once proven. Another store's (`Proof.hash`):
/// its zlib stream inflates to exactly the size its header gives, and the
/// object hashes to the id asked for, so a damaged or forged pack there is
/// never copied, not even where another pack holds a good copy of the same
/// object. The store's own (`Proof.indexCRC`), which it hashed when they
/// came: the entry's bytes match the CRC-32 its index records, as git checks
/// an entry it reuses (`pack-objects`). Entries stored as deltas and objects
/// in no pack are not found here, nor, hashed, objects larger than
/// `largestCopied`; `PackWriter` reads those through libgit2.
package final class PackEntries {
    /// How an entry is proven before it is handed out.
    package enum Proof {
        /// Inflated and hashed: for packs another store wrote.
        case hash
        /// Its bytes against the CRC-32 its index records: for the store's own packs, whose objects were hashed when
        /// they came; a page gone bad since is still caught.
        case indexCRC
    }

    private let proof: Proof
    /// Larger objects are read through libgit2: proving one here inflates it whole into memory once more.
    static let largestCopied = 1 << 20

    private let packs: [MappedPack]
    private let inflater: OpaquePointer
    /// Entries inflated and hashed so far (tests count them: a copy of what `read` proved proves nothing again).
    private(set) var proofs = 0
    private var scratch: [UInt8] = []
    /// The pack the last object found was in.
    private var lastFound = 0
    /// Index entries compared by lookups so far, in all packs (tests count them).
    var probes: Int { packs.reduce(0) { $0 + $1.probes } }
    /// Which packs list each id (`PackOwners`): made once there are enough packs to search and enough lookups that
    /// the table pays, nil until then.
    private var owners: PackOwners?
    /// Lookups asked of these packs before the table was made.
    private var lookupsWithoutOwners = 0
    /// The lookups after which the table pays: a 256th of the packs' objects (the sort that makes it costs about
    /// that many searches of every pack), 4,096 at least.
    private lazy var lookupsBeforeOwners = max(PackOwners.fewestLookups, packs.reduce(0) { $0 + $1.count } / 256)
    /// Whether the owners table is made (tests look).
    var hasOwnersTable: Bool { owners != nil }

    /// The entries of the packs in `objectsDirectory/pack` that have a version 2 index; packs that cannot be read are
    /// left out (their objects are then read through libgit2).
    package init(objectsDirectory: String, provenBy proof: Proof = .hash) throws(GitError) {
        self.proof = proof
        tracksRemembered = false
        guard let inflater = truce_inflater_new() else {
            throw GitError(operation: "read packs in \(objectsDirectory)", code: -1, errorClass: 0, message: "out of memory")
        }
        self.inflater = inflater
        let directory = objectsDirectory + "/pack/"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        let resident = ResidentChunks()
        self.resident = resident
        // The biggest first: most objects are found by the first search, where name order made most look in several.
        packs = names.filter { $0.hasSuffix(".idx") }.sorted().compactMap { name in
            MappedPack(index: directory + name, pack: directory + name.dropLast(".idx".count) + ".pack", counting: resident)
        }.sorted { $0.count > $1.count }
        remembered = Array(repeating: [], count: packs.count)
    }

    /// Reads of the same packs as `other`, through the same mappings, for another thread: each thread reads through
    /// its own (its own inflater, counts and remembered proofs), and the pages both read count once.
    private init(sharing other: PackEntries, inflater: OpaquePointer) {
        proof = other.proof
        self.inflater = inflater
        let resident = ResidentChunks()
        self.resident = resident
        packs = other.packs.map { MappedPack(sharing: $0, counting: resident) }
        remembered = Array(repeating: [], count: other.packs.count)
        tracksRemembered = true
        owners = other.owners
        lookupsWithoutOwners = other.lookupsWithoutOwners
        residentShare = other.residentShare
    }

    /// `PackEntries` of the same packs for another thread (see `init(sharing:inflater:)`). The two then share these
    /// readers' resident budget: each keeps half of what this one kept mapped before.
    package func forAnotherThread() throws(GitError) -> PackEntries {
        guard let inflater = truce_inflater_new() else {
            throw GitError(operation: "read packs on another thread", code: -1, errorClass: 0, message: "out of memory")
        }
        residentShare /= 2
        // A second thread is for bulk reads: the owners table is made once, here, for both.
        if owners == nil, packs.count >= PackOwners.fewestPacks { owners = PackOwners(packs) }
        return PackEntries(sharing: self, inflater: inflater)
    }

    deinit { truce_inflater_free(inflater) }

    /// How much of the packs' files reads may map before their pages are let go (`noteRead`). A read maps the 64 KB
    /// around what it reads (the page cache's neighbours come along; `MADV_RANDOM` does not stop it): the packs of a
    /// small store are mapped once and stay, and those of a large store count for no more than this as the process's
    /// memory, whatever order they are read in. A release every few hundred objects, as before, faulted the same
    /// pages in again and again when they were read out of pack order (most of a first push's time). Reads go in pack
    /// order now: half of the 32 MB this was cost a first push or sync of a million documents no time, and took 15-20
    /// MB off their peaks (on a file just written, a read maps the whole large page-cache folio, more than it counts).
    static let residentBudget = 16 << 20
    /// The share of `residentBudget` these packs' mappings may take: two readers of the same packs on two threads
    /// (`forAnotherThread`) take half each.
    private(set) var residentShare = residentBudget
    /// The bytes of 64 KB chunks the packs' mappings have had read since the last release, all packs together.
    let resident: ResidentChunks

    /// Looks at how much of the packs reads have mapped (`read` calls it, `PackWriter` after each copy), letting their
    /// pages go once that reaches `residentBudget`.
    func noteRead() {
        // The indexes go too: reads in pack order check each entry's CRC there, at random through the index of the
        // pack being read, and on a store just written a page of an index maps the whole large page-cache folio it is
        // in. Kept to the end of a batch, a first push straight after an import of a million documents held every
        // index of the store resident (74-104 MB); the lookups that place a batch go in the order of the ids
        // (`IndexSweep`), and no longer fault an index in again for nearly every one.
        if resident.bytes >= residentShare { releaseResidentPages() }
    }

    /// Lets the kernel take back the pages of the packs read so far: they stay in its page cache, and a later read
    /// maps them in again, but they no longer count as this process's memory (a push of a million documents reads
    /// 450 MB of packs).
    package func releaseResidentPages() {
        for pack in packs where pack.wasRead { pack.releaseResidentPages() }
        resident.bytes = 0
    }

    /// The stream lengths of the entries `read` proved, until a copy takes them: for each pack, one for each object
    /// its index lists, by position, 0 for none (a zlib stream is never empty); made when the pack's first proof is
    /// remembered. Two bytes an object, whatever a batch reads (a dictionary by id took 16 MB for 400,000 proofs, and
    /// was capped there): an entry whose stream is longer than 16 bits hold is not remembered, and is proved again
    /// when copied.
    private var remembered: [[UInt16]]
    /// Where this reader remembered proofs since they were last taken, when it reads for another thread: taking them
    /// then visits those alone, where a scan of every pack's lengths, after each run a push's walk divides, took a
    /// twentieth of a first push of a million documents, and the lengths made afresh each time as much again.
    private let tracksRemembered: Bool
    private var rememberedPositions: [(pack: Int32, index: Int32)] = []

    /// Object `id`, inflated, when a pack here holds it as a proven whole object; nil otherwise (a delta, an object
    /// larger than `largestCopied`, a damaged entry, none).
    ///
    /// With `remembering`, the proof is kept for the copy that `entry(of:)` makes of it later:
    /// the copy then neither inflates nor hashes it again. A sync's checks read each commit and tree they pass this
    /// way, and the copy of the same objects proved each once more.
    ///
    /// An entry proven by its CRC (the store's own packs) is inflated here, to exactly the size its header gives, which
    /// zlib's own checksum then vouches for: a local push reads its commits and trees so, and copies them as read.
    func read(_ id: ObjectID, remembering: Bool) -> (type: git_object_t, bytes: [UInt8])? {
        guard let (position, index, found) = find(id) else { return nil }
        return inflated(found, inPack: position, indexPosition: index, remembering: remembering)
    }

    /// `read(_:remembering:)` of an object `inPackOrder` placed: its index is not searched again.
    func read(_ id: ObjectID, at place: Place, remembering: Bool) -> (type: git_object_t, bytes: [UInt8])? {
        if case .toProve(let position) = place.proof, let found = proven(id, inPack: place.pack, at: place.offset, indexPosition: position) {
            return inflated(found, inPack: place.pack, indexPosition: position, remembering: remembering)
        }
        // Proven already (a copy's), or not proven there: another pack may hold a good copy.
        return read(id, remembering: remembering)
    }

    /// The bytes of `found`, a proven entry of `id`, inflated into `scratch` unless `proven` did; its proof remembered.
    private func inflated(
        _ found: (type: git_object_t, size: Int, stream: UnsafeRawBufferPointer), inPack pack: Int, indexPosition index: Int,
        remembering: Bool
    ) -> (type: git_object_t, bytes: [UInt8])? {
        if proof == .indexCRC, !inflate(found) { return nil }
        noteRead()
        if remembering, found.stream.count <= Int(UInt16.max) {
            if remembered[pack].isEmpty { remembered[pack] = [UInt16](repeating: 0, count: packs[pack].count) }
            remembered[pack][index] = UInt16(found.stream.count)
            if tracksRemembered { rememberedPositions.append((Int32(pack), Int32(index))) }
        }
        let bytes = scratch.withUnsafeBytes { Array($0.prefix(found.size)) }
        return (found.type, bytes)
    }

    /// The type `id`'s entry header gives, nil when no index here lists it or its entry is a delta (whose header does
    /// not say): what libgit2's header read tells, without mapping the packs a second time through libgit2. A whole
    /// object of at most `largest` bytes is proven, and its proof remembered for the copy (a first sync's checks look
    /// at every version's blob on two threads, and the copy, on one, inflated and hashed each again); a larger one is
    /// not, and a copy proves it as it copies.
    func type(of id: ObjectID, provingUpTo largest: Int = -1) -> git_object_t? {
        let header = firstPack(listing: id) { position in
            packs[position].place(of: id).flatMap { place in packs[position].entry(at: place.offset).map { (position, place, $0) } }
        }
        guard let (position, place, entry) = header, entry.size <= largest,
            let found = proven(id, inPack: position, at: place.offset, indexPosition: place.index),
            inflated(found, inPack: position, indexPosition: place.index, remembering: true) != nil
        else {
            noteRead()
            return header?.2.type
        }
        return found.type
    }

    /// Takes the proofs `other`, made of the same packs for another thread, remembered:
    /// the copy, which reads through `self`, then proves none of those objects again. Nothing is taken from entries of
    /// other packs, or proven another way.
    package func takeRemembered(from other: PackEntries) {
        // Only a reader made for another thread (`forAnotherThread`) lists what it remembered; every caller hands one.
        guard other.tracksRemembered, other.proof == proof, other.packs.map(\.indexPath) == packs.map(\.indexPath) else { return }
        for (pack, index) in other.rememberedPositions.lazy.map({ (Int($0.pack), Int($0.index)) }) where other.remembered[pack][index] != 0 {
            if remembered[pack].isEmpty { remembered[pack] = [UInt16](repeating: 0, count: packs[pack].count) }
            remembered[pack][index] = other.remembered[pack][index]
            other.remembered[pack][index] = 0
        }
        // Its lengths kept, all zero again, for its next run.
        other.rememberedPositions.removeAll(keepingCapacity: true)
    }

    /// Forgets the proofs `read` remembered and no copy took (objects of heads refused, or that the store had).
    func forgetRemembered() {
        remembered = Array(repeating: [], count: packs.count)
        rememberedPositions = []
    }

    /// The stream length `read` remembered for the `index`th entry of pack `pack`, forgotten as it is taken; nil when
    /// none was.
    private func takeRememberedLength(inPack pack: Int, indexPosition index: Int) -> Int? {
        guard !remembered[pack].isEmpty, remembered[pack][index] != 0 else { return nil }
        defer { remembered[pack][index] = 0 }
        return Int(remembered[pack][index])
    }

    /// The entry of `id` in the first pack (the biggest first) that holds it as a proven whole object: its type, its size and its zlib
    /// stream (valid while `self` lives); nil when no pack does. An entry `read` proved and remembered is taken as it
    /// was proved, and forgotten.
    ///
    /// The pack that held the object asked for before is searched first: a copy asks for objects in the order the
    /// checks read them (`CheckedObjects`), which is mostly the order the other store packed them in.
    func entry(of id: ObjectID) -> (type: git_object_t, size: Int, stream: UnsafeRawBufferPointer)? {
        // The first pack that lists it, unless its entry there does not prove: another pack may hold a good copy.
        place(of: id).flatMap { entry(at: $0, of: id) } ?? find(id)?.entry
    }

    /// Where a copy finds an entry: its pack and offset, and what proves it.
    struct Place {
        /// An entry `read` proved, with the length of its stream; or one to prove, the `indexPosition`th its index lists
        /// (whose CRC proves the store's own packs).
        enum Proof {
            case proven(streamLength: Int)
            case toProve(indexPosition: Int)
        }

        let pack: Int, offset: Int
        let proof: Proof

        /// The indices of `places` in pack order, those without one last: what goes through each pack front to back
        /// faults each page in once.
        static func packOrder(of places: [Place?]) -> [Int] {
            // Sorted by one word each (pack, then offset; none last), ties in the order given: a comparison that looked
            // into two optional places was most of a sort of a hundred thousand.
            var keyed = places.indices.map { index in
                (key: places[index].map { UInt64($0.pack) << 40 | UInt64($0.offset) } ?? .max, index: index)
            }
            keyed.sort { $0.key != $1.key ? $0.key < $1.key : $0.index < $1.index }
            return keyed.map(\.index)
        }
    }

    /// Where `id`'s entry is, as the indexes say (the packs themselves are not read), nil when no index lists it; an
    /// entry `read` proved and remembered is taken as proved, and forgotten.
    func place(of id: ObjectID) -> Place? { locate(id).map(takingRememberedProof) }

    /// `place` with the proof `read` remembered for its entry, if any, taken (and forgotten).
    private func takingRememberedProof(_ place: Place) -> Place {
        guard case .toProve(let index) = place.proof, let length = takeRememberedLength(inPack: place.pack, indexPosition: index) else {
            return place
        }
        return Place(pack: place.pack, offset: place.offset, proof: .proven(streamLength: length))
    }

    /// Where the indexes put `id`.
    private func locate(_ id: ObjectID) -> Place? {
        firstPack(listing: id) { position in
            packs[position].place(of: id).map { Place(pack: position, offset: $0.offset, proof: .toProve(indexPosition: $0.index)) }
        }
    }

    /// The owners table once `count` more lookups make it pay (`lookupsBeforeOwners`), with many packs. Made at the
    /// first lookup, it cost a sync of one change into a store of a million documents 0.2 s of its 0.26: two sorts of
    /// four million ids.
    private func owners(forLookups count: Int) -> PackOwners? {
        if let owners { return owners }
        guard packs.count >= PackOwners.fewestPacks else { return nil }
        lookupsWithoutOwners += count
        guard lookupsWithoutOwners >= lookupsBeforeOwners else { return nil }
        owners = PackOwners(packs)
        return owners
    }

    /// The first non-nil `body` of the packs that may hold `id`: those `owners` names, with many packs; else the pack of
    /// the last object found, then the others in order.
    private func firstPack<T>(listing id: ObjectID, _ body: (_ position: Int) -> T?) -> T? {
        if let owners = owners(forLookups: 1) {
            var result: T?
            owners.forEachOwner(of: id) { position in
                result = body(position)
                return result != nil
            }
            return result
        }
        for attempt in packs.indices {
            let position = attempt == 0 ? lastFound : attempt - 1 < lastFound ? attempt - 1 : attempt
            guard let result = body(position) else { continue }
            lastFound = position
            return result
        }
        return nil
    }

    /// The indices of `ids` in the order the packs hold those objects, those no index lists last: reading them in
    /// this order goes through the packs front to back.
    package func indicesInPackOrder(of ids: [ObjectID]) -> [Int] { Place.packOrder(of: locateInIDOrder(ids[...])) }

    /// The positions of `ids` with where the indexes put each, in the order the packs hold them, those no index lists
    /// last (`read(_:at:remembering:)` reads them).
    func inPackOrder(_ ids: ArraySlice<ObjectID>) -> [(position: Int, place: Place?)] {
        let places = locateInIDOrder(ids)
        return Place.packOrder(of: places).map { (ids.startIndex + $0, places[$0]) }
    }

    /// `place(of:)` of each of `ids`, in their order.
    func places(of ids: [ObjectID]) -> [Place?] { locateInIDOrder(ids[...]).map { $0.map(takingRememberedProof) } }

    /// `locate` of each of `ids`, in their order, looked up a pack at a time in the order of the ids (`IndexSweep`); a
    /// few are looked up as given.
    private func locateInIDOrder(_ ids: ArraySlice<ObjectID>) -> [Place?] {
        guard ids.count > IndexSweep.lookupsBetweenReleases else { return ids.map(locate) }
        var places = [Place?](repeating: nil, count: ids.count)
        guard let owners = owners(forLookups: ids.count) else {
            IndexSweep.lookUp(ids.indices, of: ids, releasing: releaseIndexPages) { places[$0 - ids.startIndex] = locate(ids[$0]) }
            return places
        }
        // The pack that lists each, found in one pass over the table in the order of the ids.
        let ascending = IndexSweep.ascending(ids.indices, of: ids)
        var owner = [Int](repeating: -1, count: ids.count)
        for (position, found) in zip(ascending, owners.firstOwners(ofAscending: ascending.lazy.map { ids[$0] })) {
            owner[position - ids.startIndex] = found
        }
        func group(_ position: Int) -> Int { owner[position - ids.startIndex] }
        IndexSweep.lookUp(ascending: ascending, groupedBy: group, releasing: releaseIndexPages) { position in
            let pack = owner[position - ids.startIndex]
            // Another pack may list an id whose leading 32 bits the first one's share: `locate` asks each.
            places[position - ids.startIndex] =
                pack < 0
                ? nil
                : packs[pack].place(of: ids[position]).map { Place(pack: pack, offset: $0.offset, proof: .toProve(indexPosition: $0.index)) }
                    ?? locate(ids[position])
        }
        return places
    }

    /// Lets the kernel take back the pages of the indexes read so far (the packs' stay).
    private func releaseIndexPages() {
        for pack in packs where pack.wasRead { pack.releaseIndexPages() }
    }

    /// `id`'s entry at `place`, proven; nil when it does not prove there (another pack may hold a good copy:
    /// `entry(of:)` looks).
    func entry(at place: Place, of id: ObjectID) -> (type: git_object_t, size: Int, stream: UnsafeRawBufferPointer)? {
        let pack = packs[place.pack]
        switch place.proof {
        case .proven(let length):
            // The header was read when the entry was proved: it still parses.
            guard let entry = pack.entry(at: place.offset) else { return nil }
            return (entry.type, entry.size, UnsafeRawBufferPointer(rebasing: entry.rest.prefix(length)))
        case .toProve(let position):
            return proof == .hash ? proven(pack.entry(at: place.offset), id: id) : pack.entry(at: place.offset, checkingCRCOf: position)
        }
    }

    /// `id`'s proven entry, with the pack it was found in and its position in that pack's index; its inflated bytes
    /// are then in `scratch`.
    private func find(_ id: ObjectID) -> (pack: Int, index: Int, entry: (type: git_object_t, size: Int, stream: UnsafeRawBufferPointer))? {
        firstPack(listing: id) { position in
            packs[position].place(of: id).flatMap { place in
                proven(id, inPack: position, at: place.offset, indexPosition: place.index).map { (position, place.index, $0) }
            }
        }
    }

    /// `id`'s entry at `offset` in a pack, the `index`th its index lists, proven; nil when it does not prove.
    private func proven(
        _ id: ObjectID, inPack position: Int, at offset: Int, indexPosition index: Int
    ) -> (type: git_object_t, size: Int, stream: UnsafeRawBufferPointer)? {
        proof == .hash ? proven(packs[position].entry(at: offset), id: id) : packs[position].entry(at: offset, checkingCRCOf: index)
    }

    /// Inflates `entry` into `scratch`; false when its stream does not inflate to exactly its size, or it is larger
    /// than `largestCopied`.
    private func inflate(_ entry: (type: git_object_t, size: Int, stream: UnsafeRawBufferPointer)) -> Bool {
        guard entry.size <= Self.largestCopied, let start = entry.stream.baseAddress else { return false }
        if scratch.count < entry.size { scratch = [UInt8](repeating: 0, count: entry.size) }
        var consumed = 0
        return scratch.withUnsafeMutableBytes { out in
            truce_inflater_inflate_exact(
                inflater, out.baseAddress!.assumingMemoryBound(to: UInt8.self), entry.size, start.assumingMemoryBound(to: UInt8.self),
                entry.stream.count, &consumed) == 0
        }
    }

    private func proven(
        _ entry: (type: git_object_t, size: Int, rest: UnsafeRawBufferPointer)?, id: ObjectID
    ) -> (type: git_object_t, size: Int, stream: UnsafeRawBufferPointer)? {
        guard let entry, entry.size <= Self.largestCopied, let start = entry.rest.baseAddress else { return nil }
        proofs += 1
        if scratch.count < entry.size { scratch = [UInt8](repeating: 0, count: entry.size) }
        var consumed = 0
        var hashed = git_oid()
        let proven = scratch.withUnsafeMutableBytes { out in
            let base = out.baseAddress!.assumingMemoryBound(to: UInt8.self)
            guard
                truce_inflater_inflate_exact(
                    inflater, base, entry.size, start.assumingMemoryBound(to: UInt8.self), entry.rest.count, &consumed) == 0
            else { return false }
            return git_odb_hash(&hashed, base, entry.size, entry.type) == 0
        }
        guard proven, ObjectID(hashed) == id else { return nil }
        return (entry.type, entry.size, UnsafeRawBufferPointer(start: start, count: consumed))
    }
}
