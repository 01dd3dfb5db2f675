import Foundation
import TestSupport
import Testing
import TruceCore

/// Saves through the save log: durable in the log at once, in git from the checkpoint, as if saved straight into git.
@Suite(.timeLimit(.minutes(10))) struct SaveLogStoreTests {
    static let key: DocumentKey = "notes/today.md"

    /// The versions plain git sees in the store: every commit its head refs reach.
    static func gitCommits(_ test: TestStore) throws -> [String] {
        try gitCommits(at: test.path)
    }

    static func gitCommits(at path: String) throws -> [String] {
        try git(["-C", path, "rev-list", "--glob=refs/truce/heads/*"]).output.split(separator: "\n").map(String.init)
    }

    @Test func savesLandInGitAtTheCheckpointAsAHistoryGitReads() throws {
        let test = try TestStore(saveLog: true)
        #expect(test.store.savesThroughLog)
        var ids: [VersionID] = []
        for round in 0..<5 { ids.append(try test.store.save(.text("round \(round)\n"), to: Self.key, device: "laptop").id) }
        // Before the checkpoint git sees none of them: they are in the log, not yet in refs.
        #expect(try Self.gitCommits(test).isEmpty)
        try test.store.checkpoint()
        // One linear history, newest first, each version based on the one before: no save was mistaken for a concurrent one.
        #expect(try Self.gitCommits(test).count == 5)
        #expect(try test.git("rev-list", "--first-parent", ids.last!.hex).split(separator: "\n").map(String.init) == ids.reversed().map(\.hex))
        #expect(try test.git("cat-file", "blob", "\(ids.last!.hex):notes/today.md") == "round 4\n")
        #expect(try test.store.unresolvedConflictVersions(of: Self.key).isEmpty)
        #expect(try test.store.changes().changes.map(\.version) == ids)
        let fsck = try git(["-C", test.path, "fsck", "--strict", "--no-dangling"])
        #expect(fsck.status == 0, "\(fsck.errorOutput)")
    }

    @Test func aReadServesPendingSavesFromTheLogAndAnotherWriteLandsThemFirst() throws {
        let test = try TestStore(saveLog: true)
        let saved = try test.store.save(.text("draft\n"), to: Self.key, device: "laptop")
        // A read serves the save from the log and writes nothing: git does not have it yet.
        #expect(try test.store.contents(of: Self.key) == .text("draft\n"))
        #expect(try test.store.documents() == [Self.key])
        #expect(try test.store.changes().changes.map(\.version) == [saved.id])
        #expect(try Self.gitCommits(test).isEmpty)
        // Any other write lands what the log holds first, then writes git alone.
        let other = try test.store.saveBatchOnCallingThread([BatchSave(key: "other.md", content: .text("x\n"), device: "laptop")])
        #expect(Set(try Self.gitCommits(test)) == [saved.id.hex, other[0].hex])
    }

    @Test func aSecondStoreOnTheSameDirectoryBuildsOnTheFirstsPendingSave() throws {
        let test = try TestStore(saveLog: true)
        let other = try DocumentStore.open(at: test.path)
        let first = try test.store.save(.text("one\n"), to: Self.key, device: "laptop")
        // `other` has its own handle and its own descriptor on the log, as another process would.
        let second = try other.save(.text("two\n"), to: Self.key, device: "phone")
        #expect(!second.isConflict)
        try other.checkpoint()
        #expect(try test.git("rev-parse", "\(second.id.hex)^") == first.id.hex + "\n")
        #expect(try test.store.unresolvedConflictVersions(of: Self.key).isEmpty)
        #expect(try test.store.contents(of: Self.key) == .text("two\n"))
    }

    @Test func savesOnTwoBasesStillConflictAndBothLand() throws {
        let test = try TestStore(saveLog: true)
        let base = try test.store.save(.text("base\n"), to: Self.key, device: "laptop")
        let mine = try test.store.save(.text("mine\n"), to: Self.key, device: "laptop", base: base.id)
        let theirs = try test.store.save(.text("theirs\n"), to: Self.key, device: "phone", base: base.id)
        #expect(!mine.isConflict, "a save on the current version is not a conflict")
        #expect(try test.store.unresolvedConflictVersions(of: Self.key).count == 1)
        let heads = try test.store.versions(of: Self.key).allHeads.map(\.id)
        #expect(Set(heads) == [mine.id, theirs.id])
        try test.store.checkpoint()
        #expect(Set(try Self.gitCommits(test)) == [base.id.hex, mine.id.hex, theirs.id.hex])
        #expect(Set(try test.store.versions(of: Self.key).allHeads.map(\.id)) == [mine.id, theirs.id])
    }

    @Test func aStoreReleasedWithPendingSavesLandsThem() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("store")
        var ids: [VersionID] = []
        do {
            let store = try DocumentStore.create(at: path, saveLog: true)
            for index in 0..<3 { ids.append(try store.save(.text("\(index)\n"), to: DocumentKey("d\(index).txt"), device: "laptop").id) }
        }
        #expect(Set(try Self.gitCommits(at: path)) == Set(ids.map(\.hex)))
    }

    @Test func aCheckpointKilledBeforeEmptyingTheLogPublishesAndJournalsNothingTwice() throws {
        let test = try TestStore(saveLog: true)
        let logPath = test.path + "/truce-saves.log"
        for index in 0..<3 { try test.store.save(.text("v\(index)\n"), to: Self.key, device: "laptop") }
        let pending = try #require(FileManager.default.contents(atPath: logPath))
        try test.store.checkpoint()
        let heads = try test.git("for-each-ref", "refs/truce/heads/"), changes = try test.store.changes().changes
        #expect(changes.count == 3)
        // As if the checkpoint had landed everything and died before its reset: the records are all there again.
        try pending.write(to: URL(fileURLWithPath: logPath))
        let reopened = try DocumentStore.open(at: test.path)
        #expect(try reopened.changes().changes == changes)
        #expect(try test.git("for-each-ref", "refs/truce/heads/") == heads)
    }

    @Test func aLargeSaveGoesStraightIntoGit() throws {
        let test = try TestStore(saveLog: true)
        let large = Data(repeating: 0x61, count: 2 << 20)
        let version = try test.store.save(large, to: "big.bin", device: "laptop")
        #expect(try Self.gitCommits(test) == [version.id.hex])
    }

    /// `truce.saveLog` reads as git reads a boolean; a value that is none is one clear error, and the store stays as it was.
    @Test func theSettingReadsAsAGitBooleanAndRefusesAnythingElse() throws {
        let test = try TestStore()
        for (value, expected) in [("yes", true), ("On", true), ("1", true), ("false", false), ("no", false)] {
            _ = try test.git("config", "truce.saveLog", value)
            #expect(try DocumentStore.open(at: test.path).savesThroughLog == expected, "truce.saveLog = \(value)")
        }
        _ = try test.git("config", "truce.saveLog", "sometimes")
        let before = snapshot(ofStore: test.path)
        #expect {
            _ = try DocumentStore.open(at: test.path)
        } throws: { error in
            guard case .invalidConfiguration(let what) = error as? TruceError else { return false }
            return what.contains("truce.saveLog") && what.contains("sometimes")
        }
        #expect(snapshot(ofStore: test.path) == before)
    }

    @Test func aStoreWithoutTheOptionSavesStraightIntoGit() throws {
        let test = try TestStore()
        #expect(!test.store.savesThroughLog)
        let version = try test.store.save(.text("x\n"), to: Self.key, device: "laptop")
        #expect(try Self.gitCommits(test) == [version.id.hex])
        #expect(!FileManager.default.fileExists(atPath: test.path + "/truce-saves.log"))
    }
}
