import CLibgit2
import Foundation
import TestSupport
import Testing

@testable import TruceGit

/// `PackEntries` hands out another store's deflated entries only when they prove to be the objects asked for, and a
/// pack written from them is one git accepts.
@Suite(.timeLimit(.minutes(10))) struct PackEntriesTests {
    typealias Fixture = PackWriterTests.Fixture

    static func blob(_ text: String) -> RawObject { RawObject(type: 3, bytes: Array(text.utf8)) }

    /// git run in `fixture` with `input` on its standard input; its output, which must be a success.
    /// `packs` packs written into `repository`, each of `blobsEach` small blobs of its own; their ids, a list per pack.
    static func packsOfBlobs(_ packs: Int, blobsEach: Int, in repository: Repository) throws -> [[ObjectID]] {
        try (0..<packs).map { pack in
            var known: [ObjectID: RawObject] = [:]
            let ids = (0..<blobsEach).map { number in
                let bytes = Array("pack \(pack) blob \(number)\n".utf8)
                let id = ObjectID.blobHash(of: bytes)
                known[id] = RawObject(type: RawObject.blobType, bytes: bytes)
                return id
            }
            try PackWriter(repository: repository).write(ids, known: known)
            return ids
        }
    }

    /// `ids` in an order no pack holds them in, the same for the same `seed`.
    static func shuffled(_ ids: [ObjectID], seed: UInt64) -> [ObjectID] {
        var random = SeededRandom(seed: seed)
        return ids.map { (id: $0, order: random.next()) }.sorted { $0.order < $1.order }.map(\.id)
    }

    static func git(_ fixture: Fixture, _ arguments: [String], input: String) throws -> String {
        let result = try TestSupport.git(["-C", fixture.path] + arguments, input: .text(input))
        try #require(result.status == 0, "git \(arguments.joined(separator: " ")) failed: \(result.errorOutput)")
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Objects small and compressible, random past 64 KiB, and one larger than is ever copied, packed by Truce in one
    /// store and packed from there into another: the small ones' deflated bytes are copied as they are, the large one
    /// is read and deflated again, and git finds every object whole.
    @Test func aPackWrittenFromAnotherStoresEntriesHoldsTheSameObjects() throws {
        let source = try Fixture(), target = try Fixture()
        let bulk = try MemoryRepository(path: source.path)
        let contents: [String: Data] = [
            "empty": Data(), "small": .text("one line\n"), "random": PackWriterTests.randomBytes(70_000, seed: 4),
            "large": PackWriterTests.randomBytes(PackEntries.largestCopied + 1, seed: 5),
        ]
        let (blobs, tree, commit) = try PackWriterTests.recordCommit(of: contents, in: bulk)
        _ = try bulk.flush()

        let entries = try PackEntries(objectsDirectory: source.path + "/objects")
        let sourcePack = try Data(contentsOf: URL(fileURLWithPath: source.path + "/objects/pack/" + source.packs()[0]))
        var copied: [ObjectID: Data] = [:]
        for id in [blobs["empty"]!, blobs["small"]!, blobs["random"]!, tree, commit] {
            let entry = try #require(entries.entry(of: id), "no entry for \(id)")
            copied[id] = Data(entry.stream)
            #expect(sourcePack.range(of: copied[id]!) != nil)
        }
        #expect(entries.entry(of: blobs["large"]!) == nil)
        #expect(entries.entry(of: ObjectID(hex: String(repeating: "ab", count: 20))!) == nil)

        let ids = Array(blobs.values) + [tree, commit]
        try PackWriter(repository: bulk.repository, into: target.path + "/objects/pack/").write(ids, copyingFrom: entries)
        let targetPacks = try target.packs()
        try #require(targetPacks.count == 1)
        let targetPack = try Data(contentsOf: URL(fileURLWithPath: target.path + "/objects/pack/" + targetPacks[0]))
        for (id, stream) in copied { #expect(targetPack.range(of: stream) != nil, "\(id) was not copied as it was") }
        #expect(try target.git("verify-pack", "objects/pack/" + targetPacks[0]).status == 0)
        #expect(try target.fsckFindings().isEmpty)
        for (name, id) in blobs {
            #expect(try target.git("cat-file", "blob", id.hex).stdout == contents[name]!, "\(name) differs")
        }
    }

    /// Reads for another thread go through the same mappings: both read every object alike at the same time, the
    /// proofs the other remembered are handed back to the first's copy, and its reads outlive the first.
    @Test func readsForAnotherThreadShareTheMappingsAndHandBackTheirProofs() throws {
        let source = try Fixture()
        let bulk = try MemoryRepository(path: source.path)
        let contents = Dictionary(uniqueKeysWithValues: (0..<200).map { ("f\($0)", Data.text("file \($0)\n")) })
        let (blobs, tree, commit) = try PackWriterTests.recordCommit(of: contents, in: bulk)
        _ = try bulk.flush()
        let ids = Array(blobs.values) + [tree, commit]
        var first: PackEntries? = try PackEntries(objectsDirectory: source.path + "/objects")
        let other = try first!.forAnotherThread()
        nonisolated(unsafe) let readers = [first!, other]
        nonisolated(unsafe) var read = [[ObjectID: [UInt8]]](repeating: [:], count: 2)
        read.withUnsafeMutableBufferPointer { read in
            nonisolated(unsafe) let read = read
            DispatchQueue.concurrentPerform(iterations: 2) { reader in
                for id in ids { read[reader][id] = readers[reader].read(id, remembering: reader == 1)?.bytes }
            }
        }
        #expect(read[0].count == ids.count && read[0] == read[1])
        let proofsBefore = first!.proofs
        first!.takeRemembered(from: other)
        for id in ids { _ = try #require(first!.entry(of: id)) }
        #expect(first!.proofs == proofsBefore, "the copy proved again what the other thread proved")
        // A second run of the other thread's, handed back the same way (its lengths are kept, zeroed, between runs).
        for id in ids { _ = try #require(other.read(id, remembering: true)) }
        first!.takeRemembered(from: other)
        for id in ids { _ = try #require(first!.entry(of: id)) }
        #expect(first!.proofs == proofsBefore, "the copy proved again what the other thread proved in its second run")
        first!.takeRemembered(from: other)
        _ = try #require(first!.entry(of: commit))
        #expect(first!.proofs == proofsBefore + 1, "a proof was handed back twice")
        first = nil
        #expect(other.read(commit, remembering: false)?.bytes == read[1][commit], "the mappings went with the first")
    }

    /// A pack whose index lists an id beside a different object of the same size, and a pack whose deflated bytes
    /// are damaged, are passed over: the object comes from a pack that proves it, or from nowhere.
    @Test func anEntryThatIsNotTheObjectItIsListedAsIsNeverHandedOut() throws {
        let genuine = try Fixture(), forged = try Fixture(), damaged = try Fixture(), both = try Fixture()
        let repository = try Repository.openBare(at: genuine.path)
        let id = try repository.writeBlob(.text("hello world\n"))
        try PackWriter(repository: repository).write([id])
        try PackWriter(repository: repository, into: forged.path + "/objects/pack/").write([id], known: [id: Self.blob("jello world\n")])
        try PackWriter(repository: repository, into: both.path + "/objects/pack/").write([id], known: [id: Self.blob("jello world\n")])
        try PackWriter(repository: repository, into: both.path + "/objects/pack/").write([id])
        let pack = try genuine.packs()[0]
        var bytes = try Data(contentsOf: URL(fileURLWithPath: genuine.path + "/objects/pack/" + pack))
        let genuineEntries = try PackEntries(objectsDirectory: genuine.path + "/objects")
        let stream = try withExtendedLifetime(genuineEntries) { Data(try #require(genuineEntries.entry(of: id)).stream) }
        let at = try #require(bytes.range(of: stream))
        bytes[at.lowerBound + stream.count / 2] ^= 0x01
        try bytes.write(to: URL(fileURLWithPath: damaged.path + "/objects/pack/" + pack))
        try FileManager.default.copyItem(
            atPath: genuine.path + "/objects/pack/" + pack.dropLast(5) + ".idx", toPath: damaged.path + "/objects/pack/" + pack.dropLast(5) + ".idx")

        #expect(try PackEntries(objectsDirectory: forged.path + "/objects").entry(of: id) == nil)
        #expect(try PackEntries(objectsDirectory: damaged.path + "/objects").entry(of: id) == nil)
        let bothEntries = try PackEntries(objectsDirectory: both.path + "/objects")
        try withExtendedLifetime(bothEntries) {
            let fromBoth = try #require(bothEntries.entry(of: id))
            #expect(fromBoth.size == 12)
            #expect(Data(fromBoth.stream) == stream)
        }
    }

    /// The store's own packs, proven by the CRC-32 their index records: every entry is the one a hash proves, large
    /// objects too, the last entry of a pack ends at its checksum, and a byte gone bad in an entry (or in its
    /// header) leaves that entry unfound while the others are still handed out.
    @Test func anOwnEntryIsProvenByItsIndexCRCAndADamagedOneIsNeverHandedOut() throws {
        let genuine = try Fixture(), damaged = try Fixture()
        let bulk = try MemoryRepository(path: genuine.path)
        let contents: [String: Data] = [
            "empty": Data(), "small": .text("one line\n"), "random": PackWriterTests.randomBytes(70_000, seed: 6),
            "large": PackWriterTests.randomBytes(PackEntries.largestCopied + 1, seed: 7),
        ]
        let (blobs, tree, commit) = try PackWriterTests.recordCommit(of: contents, in: bulk)
        _ = try bulk.flush()
        let ids = Array(blobs.values) + [tree, commit]
        let hashed = try PackEntries(objectsDirectory: genuine.path + "/objects")
        let byCRC = try PackEntries(objectsDirectory: genuine.path + "/objects", provenBy: .indexCRC)
        try withExtendedLifetime((hashed, byCRC)) {
            for id in ids where id != blobs["large"] {
                let proven = try #require(byCRC.entry(of: id), "\(id) unfound by its CRC")
                let expected = try #require(hashed.entry(of: id))
                #expect(Data(proven.stream) == Data(expected.stream) && proven.size == expected.size && proven.type == expected.type)
            }
            #expect(byCRC.entry(of: blobs["large"]!) != nil, "a large object is copied without being read")
            #expect(byCRC.proofs == 0, "an entry proven by its CRC was inflated")
        }
        let pack = try genuine.packs()[0]
        var bytes = try Data(contentsOf: URL(fileURLWithPath: genuine.path + "/objects/pack/" + pack))
        let small = try withExtendedLifetime(hashed) { Data(try #require(hashed.entry(of: blobs["small"]!)).stream) }
        let at = try #require(bytes.range(of: small))
        bytes[at.lowerBound - 1] ^= 0x01  // the last byte of the entry's header: its size
        try bytes.write(to: URL(fileURLWithPath: damaged.path + "/objects/pack/" + pack))
        try FileManager.default.copyItem(
            atPath: genuine.path + "/objects/pack/" + pack.dropLast(5) + ".idx", toPath: damaged.path + "/objects/pack/" + pack.dropLast(5) + ".idx")
        let damagedEntries = try PackEntries(objectsDirectory: damaged.path + "/objects", provenBy: .indexCRC)
        #expect(damagedEntries.entry(of: blobs["small"]!) == nil)
        #expect(damagedEntries.entry(of: commit) != nil)
        // Read (as a local push reads its commits and trees) and at the place the index gives, the same.
        #expect(damagedEntries.read(blobs["small"]!, remembering: true) == nil)
        let place = try #require(damagedEntries.place(of: blobs["small"]!))
        #expect(damagedEntries.entry(at: place, of: blobs["small"]!) == nil)
        let read = try #require(byCRC.read(commit, remembering: true))
        let commitBytes = try genuine.git("cat-file", "commit", commit.hex).stdout
        #expect(read.type == GIT_OBJECT_COMMIT && Data(read.bytes) == commitBytes)
        #expect(byCRC.read(blobs["large"]!, remembering: true) == nil, "a large object is read through libgit2, not into memory here")
    }

    /// What reads map of a pack is counted by the 64 KB chunks they touch, each once until the pages are let go: the
    /// estimate of the packs' share of the process's memory that `noteRead` holds to `residentBudget`.
    @Test(arguments: [PackEntries.Proof.hash, .indexCRC]) func readsCountEachChunkOfAPackOnceUntilItsPagesGo(provenBy proof: PackEntries.Proof) throws
    {
        let fixture = try Fixture()
        let bulk = try MemoryRepository(path: fixture.path)
        let contents: [String: Data] = [
            "a": .text("one line\n"), "b": .text("another line\n"), "random": PackWriterTests.randomBytes(200_000, seed: 8),
        ]
        let (blobs, _, _) = try PackWriterTests.recordCommit(of: contents, in: bulk)
        _ = try bulk.flush()
        let entries = try PackEntries(objectsDirectory: fixture.path + "/objects", provenBy: proof)
        try withExtendedLifetime(entries) {
            #expect(entries.resident.bytes == 0)
            let random = try #require(entries.entry(of: blobs["random"]!))
            let chunk = 1 << 16
            // The random blob is stored about as large as it is: four chunks at least, five at most with its neighbours.
            #expect((4 * chunk...5 * chunk).contains(entries.resident.bytes), "\(entries.resident.bytes)")
            #expect(random.stream.count > 3 * chunk)
            let afterRandom = entries.resident.bytes
            _ = try #require(entries.entry(of: blobs["a"]!))
            _ = try #require(entries.entry(of: blobs["b"]!))
            #expect(entries.resident.bytes - afterRandom <= chunk, "two small entries side by side count one chunk at most")
            entries.noteRead()
            #expect(entries.resident.bytes > 0, "below the budget nothing is let go")
            entries.releaseResidentPages()
            #expect(entries.resident.bytes == 0)
            _ = try #require(entries.entry(of: blobs["a"]!))
            #expect(entries.resident.bytes == chunk, "read again after a release, a chunk counts again")
        }
    }

    /// With many packs, a lookup searches only the packs that list the id (`PackOwners`): each object is found, in
    /// each pack that holds it, and an id no pack lists is found in none, with a probe or two per lookup where trying
    /// the packs in turn took one or two in each.
    @Test func withManyPacksALookupSearchesOnlyThePacksThatListTheID() throws {
        let fixture = try Fixture()
        let repository = try Repository.openBare(at: fixture.path)
        // Enough ids that a pack not holding one is searched a probe or two past its fan-out table.
        let blobs = try Self.packsOfBlobs(PackOwners.fewestPacks + 2, blobsEach: 2_000, in: repository)
        // One object in two packs: either copy serves.
        let shared = blobs[0][0]
        try PackWriter(repository: repository).write([shared, try repository.writeBlob(.text("beside the shared one\n"))])
        for hashed in [false, true] {
            let entries = try PackEntries(objectsDirectory: fixture.path + "/objects", provenBy: hashed ? .hash : .indexCRC)
            try withExtendedLifetime(entries) {
                // In no pack's order, so that the pack of the last object found is seldom the next one's.
                for id in Self.shuffled(Array(blobs.joined()), seed: 11) {
                    let entry = try #require(entries.entry(of: id), "\(id) unfound")
                    #expect(entry.type == GIT_OBJECT_BLOB)
                    #expect(entries.place(of: id) != nil)
                }
                #expect(entries.entry(of: ObjectID(hex: String(repeating: "5a", count: 20))!) == nil)
                #expect(entries.place(of: ObjectID(hex: String(repeating: "a5", count: 20))!) == nil)
                let lookups = blobs.joined().count * 2 + 2
                #expect(entries.probes <= lookups * 3, "\(entries.probes) probes for \(lookups) lookups")
            }
        }
    }

    /// The owners table is made once lookups pay for it, not at the first: a sync of one change into a store of many
    /// packs asks for a few objects, and sorting every id of every pack cost it most of its time.
    @Test func aFewLookupsInManyPacksMakeNoOwnersTable() throws {
        let fixture = try Fixture()
        let repository = try Repository.openBare(at: fixture.path)
        let blobs = try Self.packsOfBlobs(PackOwners.fewestPacks + 2, blobsEach: 500, in: repository)
        let ids = Self.shuffled(Array(blobs.joined()), seed: 3)
        let entries = try PackEntries(objectsDirectory: fixture.path + "/objects", provenBy: .indexCRC)
        for id in ids.prefix(20) { #expect(entries.entry(of: id) != nil) }
        #expect(entries.places(of: Array(ids.prefix(40))).allSatisfy { $0 != nil })
        #expect(!entries.hasOwnersTable, "60 lookups made the owners table")
        for round in 0..<(PackOwners.fewestLookups / ids.count + 1) { #expect(entries.places(of: ids).allSatisfy { $0 != nil }, "round \(round)") }
        #expect(entries.hasOwnersTable, "\(PackOwners.fewestLookups) lookups and more made no owners table")
    }

    /// Reads on a second thread are bulk reads: the table is made once, before the two readers part, and both use it.
    @Test func aReaderForAnotherThreadSharesOneOwnersTable() throws {
        let fixture = try Fixture()
        let repository = try Repository.openBare(at: fixture.path)
        let ids = Array(try Self.packsOfBlobs(PackOwners.fewestPacks + 1, blobsEach: 100, in: repository).joined())
        let entries = try PackEntries(objectsDirectory: fixture.path + "/objects", provenBy: .indexCRC)
        let other = try entries.forAnotherThread()
        #expect(entries.hasOwnersTable && other.hasOwnersTable)
        #expect(other.places(of: ids).allSatisfy { $0 != nil })
    }

    /// Many ids placed at once (looked up in the order of the ids, `IndexSweep`) are placed as each alone: in many packs,
    /// asked in random order, one twice, one no pack lists, and those a read proved taken as proved.
    @Test func manyIdsPlacedAtOnceArePlacedAsEachAlone() throws {
        let fixture = try Fixture()
        let repository = try Repository.openBare(at: fixture.path)
        var ids = Self.shuffled(Array(try Self.packsOfBlobs(PackOwners.fewestPacks + 1, blobsEach: 1_000, in: repository).joined()), seed: 5)
        ids += [ids[17], ObjectID(hex: String(repeating: "5a", count: 20))!]
        try #require(ids.count > IndexSweep.lookupsBetweenReleases)
        func description(_ place: PackEntries.Place?) -> String {
            guard let place else { return "none" }
            switch place.proof {
            case .proven(let length): return "\(place.pack) \(place.offset) proven \(length)"
            case .toProve(let position): return "\(place.pack) \(place.offset) at \(position)"
            }
        }
        let atOnce = try PackEntries(objectsDirectory: fixture.path + "/objects", provenBy: .indexCRC)
        let alone = try PackEntries(objectsDirectory: fixture.path + "/objects", provenBy: .indexCRC)
        for reader in [atOnce, alone] { for id in ids.prefix(300) { _ = reader.read(id, remembering: true) } }
        let probesBefore = atOnce.probes
        let placed = atOnce.places(of: ids).map(description)
        // Each in the pack the table names, in a probe or two: asked of another pack first, it takes several more.
        #expect(atOnce.probes - probesBefore <= ids.count * 2, "\(atOnce.probes - probesBefore) probes for \(ids.count) ids")
        // The second lookup of the id asked twice finds its proof taken by the first, as alone.
        let differing = zip(placed, ids.map { description(alone.place(of: $0)) }).filter { $0 != $1 }
        #expect(placed.count == ids.count && differing.isEmpty, "\(differing.count) placed otherwise, as \(differing.prefix(3))")
        #expect(placed.last == "none" && placed.filter { $0.contains("proven") }.count == 300)
        #expect(atOnce.indicesInPackOrder(of: ids) == PackEntries.Place.packOrder(of: ids.map { alone.place(of: $0) }))
    }

    /// An index or pack cut short leaves its objects unfound: nothing is read past its end.
    @Test(arguments: [4, -1, -21]) func aTruncatedIndexOrPackFindsNothing(keeping length: Int) throws {
        let fixture = try Fixture()
        let repository = try Repository.openBare(at: fixture.path)
        let id = try repository.writeBlob(.text("kept\n"))
        try PackWriter(repository: repository).write([id])
        let stem = fixture.path + "/objects/pack/" + (try fixture.packs()[0]).dropLast(5)
        #expect(try PackEntries(objectsDirectory: fixture.path + "/objects").entry(of: id) != nil)
        for suffix in [".idx", ".pack"] {
            let whole = try Data(contentsOf: URL(fileURLWithPath: stem + suffix))
            try? FileManager.default.removeItem(atPath: stem + suffix)
            // A length below zero counts from the end: the last byte, or the last byte before a pack's checksum.
            try whole.prefix(length >= 0 ? length : whole.count + length).write(to: URL(fileURLWithPath: stem + suffix))
            #expect(try PackEntries(objectsDirectory: fixture.path + "/objects").entry(of: id) == nil, "\(suffix) cut to \(length)")
            try FileManager.default.removeItem(atPath: stem + suffix)
            try whole.write(to: URL(fileURLWithPath: stem + suffix))
        }
    }

    /// git stores a version of a document as a delta against an earlier one: that entry is not copied, and a pack
    /// written from the two holds both whole, the delta read through libgit2.
    @Test func aDeltaIsReadThroughLibgit2AndPackedWhole() throws {
        let source = try Fixture(), target = try Fixture()
        let base = String(repeating: "a line that stays the same in both versions\n", count: 200)
        let first = try #require(ObjectID(hex: try Self.git(source, ["hash-object", "-w", "--stdin"], input: base)))
        let second = try #require(ObjectID(hex: try Self.git(source, ["hash-object", "-w", "--stdin"], input: base + "one more\n")))
        _ = try Self.git(source, ["pack-objects", "-q", "objects/pack/pack"], input: "\(first.hex)\n\(second.hex)\n")
        _ = try source.git("prune-packed")
        let listing = try source.git("verify-pack", "-v", "objects/pack/" + source.packs()[0]).output
        let deltas = listing.split(separator: "\n").filter { $0.split(separator: " ", omittingEmptySubsequences: true).count >= 7 }
        try #require(deltas.count == 1, "git made no delta:\n\(listing)")
        let delta = try #require(ObjectID(hex: String(deltas[0].prefix(40))))
        let whole = delta == first ? second : first

        let entries = try PackEntries(objectsDirectory: source.path + "/objects")
        #expect(entries.entry(of: delta) == nil)
        #expect(entries.entry(of: whole) != nil)
        let repository = try Repository.openBare(at: source.path)
        try PackWriter(repository: repository, into: target.path + "/objects/pack/").write([first, second], copyingFrom: entries)
        let written = try target.git("verify-pack", "-v", "objects/pack/" + target.packs()[0]).output
        #expect(!written.split(separator: "\n").contains { $0.split(separator: " ", omittingEmptySubsequences: true).count >= 7 })
        #expect(try target.git("cat-file", "blob", second.hex).stdout == Data.text(base + "one more\n"))
        #expect(try target.fsckFindings().isEmpty)
    }

    /// What `read` proved, remembered, is what the copy takes: the same bytes, with no second proof; once taken, or
    /// forgotten, or read without remembering, an entry is proved again.
    @Test func aCopyTakesWhatAReadProvedWithoutProvingItAgain() throws {
        let fixture = try Fixture()
        let bulk = try MemoryRepository(path: fixture.path)
        let (blobs, tree, commit) = try PackWriterTests.recordCommit(of: ["a": .text("first\n"), "b": .text("second\n")], in: bulk)
        _ = try bulk.flush()
        let fresh = try PackEntries(objectsDirectory: fixture.path + "/objects")
        let entries = try PackEntries(objectsDirectory: fixture.path + "/objects")
        try withExtendedLifetime((fresh, entries)) {
            let read = try #require(entries.read(commit, remembering: true))
            #expect(Data(read.bytes) == (try fixture.git("cat-file", "commit", commit.hex).stdout))
            #expect(entries.proofs == 1)
            let copied = try #require(entries.entry(of: commit))
            #expect(entries.proofs == 1, "the copy proved again what the read had proved")
            let proved = try #require(fresh.entry(of: commit))
            #expect(Data(copied.stream) == Data(proved.stream) && copied.size == proved.size && copied.type == proved.type)
            // Taken once: a second copy proves it.
            _ = try #require(entries.entry(of: commit))
            #expect(entries.proofs == 2)

            _ = try #require(entries.read(tree, remembering: false))
            _ = try #require(entries.entry(of: tree))
            #expect(entries.proofs == 4)
            _ = try #require(entries.read(blobs["a"]!, remembering: true))
            entries.forgetRemembered()
            _ = try #require(entries.entry(of: blobs["a"]!))
            #expect(entries.proofs == 6)
            // A read of one object remembers nothing for another.
            _ = try #require(entries.read(blobs["a"]!, remembering: true))
            _ = try #require(entries.entry(of: blobs["b"]!))
            #expect(entries.proofs == 8)
        }
    }

    /// A remembered proof keeps a stream's length in 16 bits: an entry whose stream is longer than 64 KiB (300 KB of
    /// random bytes) is never copied cut to what those bits hold, nor from another pack, after `read` proved it; its
    /// copy is the whole stream, and a pack written from it holds the object whole.
    @Test func anEntryLongerThan64KiBIsCopiedWholeAfterARead() throws {
        let source = try Fixture(), target = try Fixture()
        let bulk = try MemoryRepository(path: source.path)
        let contents: [String: Data] = ["long": PackWriterTests.randomBytes(300_000, seed: 6), "short": .text("short\n")]
        let (blobs, tree, commit) = try PackWriterTests.recordCommit(of: contents, in: bulk)
        _ = try bulk.flush()
        let long = try #require(blobs["long"])
        let fresh = try PackEntries(objectsDirectory: source.path + "/objects")
        let entries = try PackEntries(objectsDirectory: source.path + "/objects")
        try withExtendedLifetime((fresh, entries)) {
            let whole = try #require(fresh.entry(of: long))
            try #require(whole.stream.count > 1 << 16, "a stream of \(whole.stream.count) bytes tests nothing here")
            let read = try #require(entries.read(long, remembering: true))
            #expect(Data(read.bytes) == contents["long"])
            let copied = try #require(entries.entry(of: long))
            #expect(copied.type == whole.type && copied.size == whole.size)
            #expect(copied.stream.count == whole.stream.count && Data(copied.stream) == Data(whole.stream))

            // Every object read first, as a sync's checks read them, then packed from what was remembered.
            let ids = Array(blobs.values) + [tree, commit]
            for id in ids { _ = try #require(entries.read(id, remembering: true)) }
            try PackWriter(repository: bulk.repository, into: target.path + "/objects/pack/").write(ids, copyingFrom: entries)
        }
        #expect(try target.git("verify-pack", "objects/pack/" + target.packs()[0]).status == 0)
        #expect(try target.fsckFindings().isEmpty)
        for (name, id) in blobs {
            #expect(try target.git("cat-file", "blob", id.hex).stdout == contents[name]!, "\(name) differs")
        }
    }

    /// An index of `ids` (sorted here) for a pack of no objects, the offset of the i-th id being 12 + i: enough for
    /// `MappedPack` to look ids up in.
    static func handWrittenIndex(of ids: [[UInt8]], in directory: String) throws -> MappedPack {
        let sorted = ids.sorted { $0.lexicographicallyPrecedes($1) }
        func bigEndian(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }
        var index: [UInt8] = [0xFF, 0x74, 0x4F, 0x63, 0, 0, 0, 2]
        for byte in 0..<256 { index += bigEndian(sorted.count { Int($0[0]) <= byte }) }
        for id in sorted { index += id }
        for _ in sorted { index += [0, 0, 0, 0] }
        for position in sorted.indices { index += bigEndian(12 + position) }
        index += [UInt8](repeating: 0, count: 40)
        let pack = Array("PACK".utf8) + bigEndian(2) + bigEndian(0) + [UInt8](repeating: 0, count: 20)
        try Data(index).write(to: URL(fileURLWithPath: directory + "/pack-test.idx"))
        try Data(pack).write(to: URL(fileURLWithPath: directory + "/pack-test.pack"))
        return try #require(MappedPack(index: directory + "/pack-test.idx", pack: directory + "/pack-test.pack"))
    }

    /// Ids spread as hashes are found in a few probes each (halving takes about log2 of a fan-out bucket's size), and
    /// ids the index does not list are not found.
    @Test func evenlySpreadIdsAreFoundInAFewProbes() throws {
        let fixture = try Fixture()
        let ids = (0..<30_000).map { SHA1.hash(Array("object \($0)".utf8)) }
        let pack = try Self.handWrittenIndex(of: ids, in: fixture.path + "/objects/pack")
        let sorted = ids.sorted { $0.lexicographicallyPrecedes($1) }
        let misplaced = sorted.indices.filter { pack.offset(of: ObjectID(bytes: sorted[$0][...])) != 12 + $0 }
        #expect(misplaced.isEmpty, "\(misplaced.count) ids not found where the index puts them")
        let halving = log2(Double(ids.count) / 256)
        #expect(Double(pack.probes) / Double(ids.count) < halving / 2, "\(pack.probes) probes for \(ids.count) lookups")
        for absent in (0..<1000).map({ SHA1.hash(Array("absent \($0)".utf8)) }) {
            #expect(pack.offset(of: ObjectID(bytes: absent[...])) == nil)
        }
    }

    /// Ids bunched where their leading bytes tell nothing apart (a hostile index can list any ids) still cost no more
    /// probes than halving after the interpolated ones.
    @Test func bunchedIdsCostNoMoreThanHalvingAfterAFewGuesses() throws {
        let fixture = try Fixture()
        let count = 1 << 16
        var ids = (0..<count - 1).map { [UInt8](repeating: 0, count: 16) + [0, 0, UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        ids.append([0x00] + [UInt8](repeating: 0xFF, count: 19))
        let pack = try Self.handWrittenIndex(of: ids, in: fixture.path + "/objects/pack")
        var most = 0
        for (position, id) in ids.enumerated() where position % 97 == 0 || position == count - 1 {
            let before = pack.probes
            #expect(pack.offset(of: ObjectID(bytes: id[...])) == 12 + position)
            most = max(most, pack.probes - before)
        }
        #expect(most <= MappedPack.interpolatedProbes + 17, "a lookup took \(most) probes")
    }
}
