import Foundation
import TestSupport
import Testing

@testable import TruceGit

/// Lookups of many ids in a pack index go in the order of the ids, with the index's pages let go every so many, and
/// find each id where git's `show-index` lists it.
///
/// What this keeps off the process's memory is a figure of the benchmark (a first push of a million documents, in
/// `Sources/TruceBench/README.md`): on this project's kernel a fault maps a whole large folio of a file just written,
/// so a small index in a test is all resident after one lookup whatever the order.
@Suite(.timeLimit(.minutes(10))) struct IndexSweepTests {
    /// 20,000 blobs in one pack, asked for in random order: each is found at the offset git lists, the lookups go in
    /// ascending order of id, and the index's pages are let go before the first, every `lookupsBetweenReleases`
    /// lookups, and after the last (put back in the order given: it fails).
    @Test func lookupsGoInTheOrderOfTheIdsAndFindEachWhereGitListsIt() throws {
        let fixture = try PackWriterTests.Fixture()
        let bulk = try MemoryRepository(path: fixture.path)
        for number in 0..<20_000 { bulk.record(try bulk.repository.writeBlob(Data("blob \(number)\n".utf8))) }
        _ = try bulk.flush(compression: .stored)
        let packPath = fixture.path + "/objects/pack/" + (try #require(fixture.packs().first))
        let indexPath = String(packPath.dropLast(".pack".count)) + ".idx"
        let listed = try TestSupport.git(["show-index"], input: try Data(contentsOf: URL(fileURLWithPath: indexPath)))
        try #require(listed.status == 0)
        var offsets: [ObjectID: Int] = [:]
        for line in listed.output.split(separator: "\n") {
            let fields = line.split(separator: " ")
            offsets[try #require(ObjectID(hex: String(fields[1])))] = Int(fields[0])
        }
        try #require(offsets.count == 20_000)
        var generator = SystemRandomNumberGenerator()
        // One asked for twice, and one no index lists.
        let ids = offsets.keys.shuffled(using: &generator) + [offsets.keys.first!, ObjectID(hex: String(repeating: "ab", count: 20))!]

        let pack = try #require(MappedPack(index: indexPath, pack: packPath))
        var found = [Int?](repeating: nil, count: ids.count)
        var lookedUp: [ObjectID] = []
        var releasedAfter: [Int] = []
        func release() {
            releasedAfter.append(lookedUp.count)
            pack.releaseIndexPages()
        }
        IndexSweep.lookUp(ids.indices, of: ids, releasing: release) { position in
            lookedUp.append(ids[position])
            found[position] = pack.offset(of: ids[position])
        }

        #expect(ids.indices.allSatisfy { found[$0] == offsets[ids[$0]] })
        #expect(lookedUp.count == ids.count && zip(lookedUp, lookedUp.dropFirst()).allSatisfy { $0 <= $1 })
        let every = IndexSweep.lookupsBetweenReleases
        #expect(releasedAfter == Array(stride(from: 0, to: ids.count, by: every)) + [ids.count])
    }

    /// Grouped (by the pack that lists each), the lookups go a group at a time, in the order of the ids within each, and
    /// the pages are let go whenever the group changes as well (put back a sort by id alone: it fails).
    @Test func groupedLookupsGoAGroupAtATime() {
        let ids = (0..<10_000).map { ObjectID.blobHash(of: Array("id \($0)\n".utf8)) }
        let groupOf = ids.map { Int($0.bytes[19] % 3) }
        func group(_ position: Int) -> Int { groupOf[position] }
        var lookedUp: [Int] = []
        var releasedAfter: [Int] = []
        func release() { releasedAfter.append(lookedUp.count) }
        IndexSweep.lookUp(ids.indices, of: ids, groupedBy: group, releasing: release) { lookedUp.append($0) }
        #expect(lookedUp.count == ids.count && Set(lookedUp).count == ids.count)
        let groups = lookedUp.map(group)
        #expect(groups == groups.sorted() && Set(groups) == [0, 1, 2])
        #expect(zip(lookedUp, lookedUp.dropFirst()).allSatisfy { group($0) != group($1) || ids[$0] < ids[$1] })
        let changes = lookedUp.indices.dropFirst().filter { groups[$0] != groups[$0 - 1] }
        #expect(Set(changes + [0, ids.count]).isSubset(of: Set(releasedAfter)))
        #expect(zip(releasedAfter, releasedAfter.dropFirst()).allSatisfy { $1 - $0 <= IndexSweep.lookupsBetweenReleases })
    }
}
