import Foundation
import TestSupport
import Testing

@testable import TruceCore
@testable import TruceGit

/// Prune writes again only what came since the big packs were written, keeps the packs it keeps few, and writes
/// nothing when nothing came.
@Suite(.timeLimit(.minutes(10))) struct RepackPlanTests {
    /// Packs of made-up ids: only their `.idx` files, which is all a plan reads.
    final class Packs {
        let directory = TemporaryDirectory("truce-repack-plan")
        private var next: UInt64 = 0

        /// A pack of `count` new ids; returns its path and ids.
        func pack(_ count: Int) -> (path: String, ids: [ObjectID]) {
            let ids = (0..<count).map { _ in
                next += 1
                var bytes = [UInt8](repeating: 0, count: 20)
                withUnsafeBytes(of: next.bigEndian) { bytes.replaceSubrange(12..<20, with: $0) }
                bytes[0] = UInt8(truncatingIfNeeded: next &* 2_654_435_761 >> 8)
                return ObjectID(bytes: bytes[...])
            }.sorted()
            let path = directory.file(String(format: "pack-%08d.pack", next))
            Self.writeIndex(of: ids, to: String(path.dropLast(".pack".count)) + ".idx")
            return (path, ids)
        }

        /// A version 2 index as far as a plan reads one: magic, version, fan-out and the sorted ids.
        static func writeIndex(of sorted: [ObjectID], to path: String) {
            var bytes: [UInt8] = [0xFF, 0x74, 0x4F, 0x63, 0, 0, 0, 2]
            for first in 0..<256 {
                let count = UInt32(sorted.filter { Int($0.bytes[$0.bytes.startIndex]) <= first }.count)
                bytes += withUnsafeBytes(of: count.bigEndian, Array.init)
            }
            for id in sorted { bytes += id.bytes }
            FileManager.default.createFile(atPath: path, contents: Data(bytes))
        }
    }

    static let limits = RepackPlan.Limits(smallestKept: 100, large: 10_000, packs: 4)

    @Test func theBiggestPacksStayAndTheRestIsWrittenOnceItIsSmallEnough() {
        let packs = Packs()
        let big = packs.pack(4000), middle = packs.pack(1000), small = packs.pack(900)
        let newObjects = Set((0..<50).map { _ in packs.pack(1).ids[0] })
        let reachable = Set(big.ids + middle.ids + small.ids).union(newObjects)
        let plan = RepackPlan.make(packs: [small.path, big.path, middle.path], reachable: reachable, limits: Self.limits)
        // 4000 ≥ 2 × 1950 stays; 1000 < 2 × 950 does not, and neither does what follows it.
        #expect(plan.kept == [big.path])
        let writesTheRest = plan.toWrite == Set(middle.ids + small.ids).union(newObjects)
        #expect(writesTheRest, "writes \(plan.toWrite.count) objects")
    }

    @Test func aPruneRightAfterAPruneWritesNothing() {
        let packs = Packs()
        let big = packs.pack(4000), written = packs.pack(1950)
        let plan = RepackPlan.make(packs: [written.path, big.path], reachable: Set(big.ids + written.ids), limits: Self.limits)
        #expect(Set(plan.kept) == [big.path, written.path])
        #expect(plan.toWrite.count == 0)
    }

    @Test func aPackWithAnObjectNothingReachesIsWrittenAgainWithoutIt() {
        let packs = Packs()
        let big = packs.pack(4000), small = packs.pack(200)
        let reachable = Set(big.ids.dropLast() + small.ids)
        let plan = RepackPlan.make(packs: [big.path, small.path], reachable: reachable, limits: Self.limits)
        // The small pack alone is all reachable, but far smaller than what is left: everything goes into one pack.
        #expect(plan.kept.isEmpty)
        let writesAll = plan.toWrite == reachable
        #expect(writesAll, "writes \(plan.toWrite.count) of \(reachable.count) objects")
    }

    @Test func packsUnderTheSmallestKeptSizeAreWrittenAgain() {
        let packs = Packs()
        let tiny = packs.pack(60), other = packs.pack(10)
        let plan = RepackPlan.make(packs: [tiny.path, other.path], reachable: Set(tiny.ids + other.ids), limits: Self.limits)
        #expect(plan.kept.isEmpty)
        #expect(plan.toWrite.count == 70)
    }

    @Test func largePacksStayWhateverFollowsThemButAPruneLeavesAtMostTheMostPacks() {
        let packs = Packs()
        let large = (0..<5).map { _ in packs.pack(10_000) }
        let reachable = Set(large.flatMap(\.ids))
        let plan = RepackPlan.make(packs: large.map(\.path), reachable: reachable, limits: Self.limits)
        // Four packs at most: three kept as they are, and one written of the other two.
        #expect(plan.kept == large.prefix(3).map(\.path))
        let writesTheLastTwo = plan.toWrite == Set(large.dropFirst(3).flatMap(\.ids))
        #expect(writesTheLastTwo, "writes \(plan.toWrite.count) objects")
    }

    /// A store whose import wrote a pack big enough to keep: a prune after a few saves writes a pack of what they
    /// wrote alone, leaves the import's pack as it was, and a second prune writes nothing.
    @Test func aPruneAfterAFewSavesWritesWhatTheyWroteNotTheStore() async throws {
        let test = try await PruneSizeTests.importedStore(documents: 1100)
        // The creation's pack (the store's branch, one commit) and the import's, the larger.
        let packs = try Self.packNames(test)
        #expect(packs.count == 2)
        let size = { (name: String) in (try? FileManager.default.attributesOfItem(atPath: test.path + "/objects/pack/" + name)[.size] as? Int) ?? 0 }
        let imported = [try #require(packs.max { size($0) < size($1) })]
        for index in 0..<5 {
            try test.store.save(.text("edited \(index)\n"), to: DocumentKey(stringLiteral: "d\(index)/doc\(index).txt"), device: "laptop")
        }
        let importedPack = test.path + "/objects/pack/" + imported[0]
        let importedBytes = try Data(contentsOf: URL(fileURLWithPath: importedPack))

        let report = try await test.store.prune(expire: 0)
        let after = try Self.packNames(test)
        #expect(after.count == 2 && after.contains(imported[0]), "\(imported) became \(after)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: importedPack)) == importedBytes)
        let written = try #require(after.first { $0 != imported[0] })
        let writtenObjects = try #require(PackIndex.objectIDs(ofPack: test.path + "/objects/pack/" + written))
        #expect(writtenObjects.count < 100, "the new pack holds \(writtenObjects.count) objects")
        #expect(report.packedObjects > 4400)
        #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)
        #expect(try test.store.contents(of: "d3/doc3.txt") == .text("edited 3\n"))

        let files = snapshot(ofStore: test.path)
        try await test.store.prune(expire: 0)
        #expect(snapshot(ofStore: test.path) == files)
    }

    static func packNames(_ test: TestStore) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: test.path + "/objects/pack").filter { $0.hasSuffix(".pack") }.sorted()
    }
}
