import Foundation
import TestSupport
import Testing

@testable import TruceCore

@Suite(.timeLimit(.minutes(10))) struct PruneTests {
    /// `git count-objects -v` as numbers.
    static func countObjects(_ test: TestStore) throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for line in try test.git("count-objects", "-v").split(separator: "\n") {
            let parts = line.split(separator: ":").map { $0.trimmingCharacters(in: .whitespaces) }
            if parts.count == 2, let value = Int(parts[1]) { counts[parts[0]] = value }
        }
        return counts
    }

    /// An object no ref needs, as a crashed save leaves behind.
    static func abandonedBlob(_ test: TestStore, _ text: String) throws -> String {
        try git("-C", test.path, "hash-object", "-w", "--stdin", input: .text(text)).output.trimmingCharacters(in: .newlines)
    }

    @Test func pruneNowReclaimsDeletedDocumentsAndAbandonedObjects() async throws {
        let test = try TestStore()
        let kept = try test.store.save(.text("keep me\n"), to: "kept.txt", device: "laptop")
        try test.store.save(.text(String(repeating: "big\n", count: 5000)), to: "gone.txt", device: "laptop")
        try test.store.delete("gone.txt", device: "laptop")
        let abandoned = try Self.abandonedBlob(test, "left by a crash\n")
        let temporary = test.path + "/objects/tmp_object_git2_left"
        try Data("half written".utf8).write(to: URL(fileURLWithPath: temporary))
        let before = try Self.countObjects(test)

        let report = try await test.store.prune(expire: 0)
        #expect(report.droppedDocuments == ["gone.txt"])
        let after = try Self.countObjects(test)
        #expect(before["count"]! > 0)
        #expect(after["count"] == 0)
        #expect(after["packs"] == 1)
        #expect(after["size-pack"]! < before["size"]!)
        #expect(try git("-C", test.path, "cat-file", "-e", abandoned).status != 0)
        #expect(!FileManager.default.fileExists(atPath: temporary))
        #expect(try test.store.state(of: "gone.txt") == .absent)
        #expect(try test.store.contents(of: kept) == .text("keep me\n"))
        #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)
        #expect(try test.store.changes().changes.count == 3)
    }

    /// Whatever a reference names survives prune, whether it is packed or loose and whatever it names: a tree, a
    /// blob, a commit nothing else reaches, and an annotated tag together with the commit it names.
    @Test func everyObjectAReferenceNamesSurvivesWhetherPackedOrLoose() async throws {
        let test = try TestStore()
        try test.store.save(.text("a document\n"), to: "doc.txt", device: "laptop")
        func run(_ arguments: [String], input: String? = nil) throws -> String {
            let result = try git(["-C", test.path] + arguments, input: .text(input ?? ""))
            try #require(result.status == 0, "git \(arguments.joined(separator: " ")): \(result.errorOutput)")
            return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let blob = try run(["hash-object", "-w", "--stdin"], input: "only a tree a ref names holds me\n")
        let tree = try run(["mktree"], input: "100644 blob \(blob)\tkept.txt\n")
        let tagged = try run(["commit-tree", tree, "-m", "only a tag names me"])
        let reached = try run(["commit-tree", tree, "-m", "only a loose ref names me"])
        let looseBlob = try run(["hash-object", "-w", "--stdin"], input: "only a loose ref names me\n")
        let looseTagged = try run(["commit-tree", tree, "-m", "only a loose tag names me"])
        _ = try run(["update-ref", "refs/keep/tree", tree])
        _ = try run(["tag", "-a", "-m", "a tag", "keep-tag", tagged])
        _ = try run(["pack-refs", "--all"])
        _ = try run(["update-ref", "refs/keep/commit", reached])
        _ = try run(["update-ref", "refs/keep/blob", looseBlob])
        _ = try run(["tag", "-a", "-m", "a loose tag", "loose-tag", looseTagged])
        let packed = try String(contentsOfFile: test.path + "/packed-refs", encoding: .utf8)
        try #require(packed.contains("refs/keep/tree") && packed.contains("\n^\(tagged)"), "packed-refs: \(packed)")

        _ = try await test.store.prune(expire: 0)
        for object in [blob, tree, tagged, reached, looseBlob, looseTagged] {
            #expect(try git(["-C", test.path, "cat-file", "-e", object]).status == 0, "\(object) is gone")
        }
        #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)
    }

    /// Versions a crash kept out of the journal (their refs published, the journal not yet moved) are journaled by
    /// the next prune, parents before children, and by no later one again.
    @Test func versionsACrashKeptOutOfTheJournalAreJournaledByPrune() async throws {
        let test = try TestStore()
        let first = try test.store.save(.text("1\n"), to: "a.txt", device: "laptop")
        let journaledTip = try test.git("rev-parse", ChangeJournal.reference).trimmingCharacters(in: .newlines)
        let second = try test.store.save(.text("2\n"), to: "a.txt", device: "laptop")
        let third = try test.store.save(.text("3\n"), to: "a.txt", device: "laptop")
        let other = try test.store.save(.text("b\n"), to: "b.txt", device: "phone")
        _ = try test.git("update-ref", ChangeJournal.reference, journaledTip)
        #expect(try test.store.changes().changes.map(\.version) == [first.id])

        try await test.store.prune(expire: 0)
        let journaled = try test.store.changes().changes.map(\.version)
        #expect(journaled.count == 4 && journaled.first == first.id && Set(journaled) == [first.id, second.id, third.id, other.id])
        #expect(try #require(journaled.firstIndex(of: second.id)) < #require(journaled.firstIndex(of: third.id)))
        try await test.store.prune(expire: 0)
        #expect(try test.store.changes().changes.map(\.version) == journaled)
        #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)
    }

    @Test func theBaseAndHeadsOfAnOpenConflictSurvive() async throws {
        let test = try TestStore()
        let made = try test.makeConflict("a.txt", base: .text("base\n"), heads: [("laptop", .text("1\n")), ("phone", .text("2\n"))])
        try await test.store.prune(expire: 0)
        let versions = try test.store.versions(of: "a.txt")
        #expect(versions.base?.id == made.base.id)
        #expect(try test.store.contents(of: made.base) == .text("base\n"))
        #expect(Set(versions.heads.map(\.id)) == Set(made.heads.map(\.id)))
        #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)
    }

    /// Prune mends conflict markers a crash left wrong, reading only documents with several heads or a marker: a
    /// missing marker of a document in conflict comes back, a marker of a document with one head goes.
    @Test func pruneRestoresAMissingConflictMarkerAndDropsAStaleOne() async throws {
        let test = try TestStore()
        try test.makeConflict("a.txt", base: .text("base\n"), heads: [("laptop", .text("1\n")), ("phone", .text("2\n"))])
        let single = try test.store.save(.text("one head\n"), to: "b.txt", device: "laptop")
        let conflictMarker = ConflictMarkers.marker(of: "a.txt"), staleMarker = ConflictMarkers.marker(of: "b.txt")
        _ = try test.git("update-ref", "-d", conflictMarker)
        _ = try test.git("update-ref", staleMarker, single.version.id.hex)
        #expect(try test.git("for-each-ref", "--format=%(refname)", "refs/truce/conflicts/") == staleMarker + "\n")

        try await test.store.prune()
        #expect(try test.git("for-each-ref", "--format=%(refname)", "refs/truce/conflicts/") == conflictMarker + "\n")
        #expect(try test.store.documentsInConflict().map(\.key) == ["a.txt"])
    }

    @Test func theGracePeriodKeepsRecentDeletionsAndObjects() async throws {
        let test = try TestStore()
        try test.store.save(.text("x\n"), to: "gone.txt", device: "laptop")
        let deletion = try test.store.delete("gone.txt", device: "laptop")
        let abandoned = try Self.abandonedBlob(test, "recent leftover\n")
        let report = try await test.store.prune()
        #expect(report.droppedDocuments.isEmpty)
        #expect(try test.store.currentVersion(of: "gone.txt")?.id == deletion.id)
        #expect(try git("-C", test.path, "cat-file", "-e", abandoned).status == 0)
        #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)
    }

    @Test func resolutionHistoryIsKeptAndPruneCanRunTwice() async throws {
        let test = try TestStore()
        let made = try test.makeConflict("a.txt", base: .text("0\n"), heads: [("laptop", .text("1\n")), ("phone", .text("2\n"))])
        let resolution = try await #require(test.store.resolve("a.txt", to: .text("3\n"), device: "x").version)
        try await test.store.prune(expire: 0)
        try await test.store.prune(expire: 0)
        let history = try test.store.history(of: "a.txt").map(\.id)
        #expect(Set(history) == Set([resolution.id, made.base.id] + made.heads.map(\.id)))
        #expect(try Self.countObjects(test)["packs"] == 1)
        #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)
    }

    @Test func aSecondPruneWaitsForTheFirstButAStaleLockIsTakenOver() async throws {
        let test = try TestStore()
        try test.store.save(.text("x\n"), to: "a.txt", device: "laptop")
        let lock = test.path + "/truce-prune.lock"
        try Data("\(getpid())\n".utf8).write(to: URL(fileURLWithPath: lock))
        #expect(throws: TruceError.busy("another prune holds \(test.path)/truce-prune.lock")) { try test.store.prune(expire: 0) }
        // A pid that cannot be alive: the prune that held it died.
        try Data("2147483646\n".utf8).write(to: URL(fileURLWithPath: lock))
        try await test.store.prune(expire: 0)
        #expect(!FileManager.default.fileExists(atPath: lock))
    }

    /// The size of the store's packs in bytes, and how many there are.
    static func packs(_ test: TestStore) throws -> (count: Int, bytes: Int) {
        let counts = try countObjects(test)
        return (counts["packs"] ?? -1, counts["size-pack"] ?? -1)
    }

    @Test func repeatedPrunesAtTheDefaultGraceKeepTheStoreSizeFlat() async throws {
        let test = try TestStore()
        for index in 0..<20 {
            try test.store.save(.text("version \(index)\n" + String(repeating: "text\n", count: index * 50)), to: "a.txt", device: "laptop")
        }
        _ = try await test.store.saveBatch(
            (0..<30).map { BatchSave(key: DocumentKey(stringLiteral: "batch/\($0).txt"), content: .text("\($0)\n"), device: "laptop") })
        let young = try Self.abandonedBlob(test, "unreachable, but within the grace period\n")
        try await test.store.prune()
        let first = try Self.packs(test)
        for _ in 0..<3 {
            try await test.store.prune()
            let again = try Self.packs(test)
            #expect(again.count == first.count && again.bytes == first.bytes, "a prune without writes grew the packs from \(first) to \(again)")
        }
        #expect(first.count == 1)
        #expect(try git("-C", test.path, "cat-file", "-e", young).status == 0)
        #expect(try test.store.history(of: "a.txt").count == 20)
        #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)
    }

    @Test func aPackHoldingObjectsTheNewPackLacksStaysForTheGracePeriod() async throws {
        let test = try TestStore()
        try test.store.save(.text("kept\n"), to: "a.txt", device: "laptop")
        // A pack of an object nothing reaches yet, as a writer leaves it just before its ref lands.
        let young = try Self.abandonedBlob(test, "a concurrent writer's object\n")
        let packed = try git(["-C", test.path, "pack-objects", "objects/pack/pack"], input: .text(young + "\n"))
        #expect(packed.status == 0, "git pack-objects: \(packed.errorOutput)")
        let pack = test.path + "/objects/pack/pack-" + packed.output.trimmingCharacters(in: .newlines) + ".pack"
        try FileManager.default.removeItem(atPath: test.path + "/objects/" + young.prefix(2) + "/" + young.dropFirst(2))
        try await test.store.prune()
        #expect(FileManager.default.fileExists(atPath: pack))
        #expect(try git("-C", test.path, "cat-file", "-e", young).status == 0)
        #expect(try Self.packs(test).count == 2)
    }

    @Test func aTemporaryPackAKilledFetchLeftGoesAfterAnHourAtTheDefaultGrace() async throws {
        let test = try TestStore()
        try test.store.save(.text("kept\n"), to: "a.txt", device: "laptop")
        let dead = test.path + "/objects/pack/pack_git2_dead", live = test.path + "/objects/pack/pack_git2_live"
        for file in [dead, live] { try Data("PACK half fetched".utf8).write(to: URL(fileURLWithPath: file)) }
        let old = Date().addingTimeInterval(-StoreEngine.temporaryFileAge - 60)
        try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: dead)
        try await test.store.prune()
        #expect(!FileManager.default.fileExists(atPath: dead), "a temporary pack untouched for over an hour stayed")
        #expect(FileManager.default.fileExists(atPath: live), "a temporary pack a fetch may still be writing went")
        #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)
    }
}
