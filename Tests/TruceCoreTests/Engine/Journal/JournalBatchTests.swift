import Foundation
import TestSupport
import Testing

@testable import TruceCore
@testable import TruceGit

/// Many changes recorded at once are one journal entry whose `changes` file lists them, one line each.
@Suite(.timeLimit(.minutes(10))) struct JournalBatchTests {
    @Test func aBatchIsOneEntryThatChangesReadsInOrderAndGitShows() throws {
        let test = try TestStore()
        try test.store.save(.text("first\n"), to: "before.txt", device: "laptop")
        let token = try test.store.changes().token
        // Keys with spaces, marks and non-ASCII bytes: the line splits only at its tabs.
        let keys: [DocumentKey] = (0..<40).map { DocumentKey(stringLiteral: "notes/caf\u{E9} \($0).md") } + ["a b/c\u{301}.txt"]
        let date = try #require(isoDate("2026-11-30T10:00:00Z"))
        let ids = try test.store.saveBatch(keys.map { BatchSave(key: $0, content: .text("\($0.rawValue)\n"), device: "Ada's laptop", date: date) })
        // One commit for the whole batch, on top of the single save's entry.
        #expect(try test.git("rev-list", "--count", "refs/truce/journal") == "2\n")
        #expect(try test.git("log", "-1", "--format=%s", "refs/truce/journal") == "journal 41 changes\n")
        let listed = try test.git("show", "refs/truce/journal:changes").split(separator: "\n")
        #expect(listed.count == 41)
        #expect(listed.first == Substring("save\t\(ids[0].hex)\t\(Int(date.timeIntervalSince1970))\t-\tAda's laptop\tnotes/caf\u{E9} 0.md"))
        let later = try test.store.changes(since: token).changes
        #expect(later.map(\.version) == ids)
        #expect(later.map { Array($0.key.rawValue.utf8) } == keys.map { Array($0.rawValue.utf8) })
        #expect(later.allSatisfy { $0.kind == .save && $0.author == "Ada's laptop" && $0.date == date })
        // A token taken after the batch sees nothing before it; the whole history has the single save first.
        #expect(try test.store.changes(since: test.store.changes().token).changes.isEmpty)
        #expect(try test.store.changes().changes.count == 42)
        #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)
    }

    @Test func aFewChangesStayOneEntryEach() throws {
        let test = try TestStore()
        let keys = (0..<ChangeJournal.batchThreshold).map { DocumentKey(stringLiteral: "k\($0).txt") }
        _ = try test.store.saveBatch(keys.map { BatchSave(key: $0, content: .text("x\n"), device: "laptop") })
        #expect(try test.git("rev-list", "--count", "refs/truce/journal") == "\(keys.count)\n")
        let trailers = try test.git("log", "-1", "--format=%(trailers:key=Document,valueonly)", "refs/truce/journal")
        #expect(trailers.trimmingCharacters(in: .whitespacesAndNewlines) == keys.last!.rawValue)
    }

    @Test func aBatchLineThatIsNotOneMakesTheEntryUnreadable() {
        #expect(ChangeJournal.parseBatch(Data("save\tnot-an-id\t0\t-\tlaptop\ta.txt\n".utf8)) == nil)
        #expect(ChangeJournal.parseBatch(Data("save\t\(String(repeating: "a", count: 40))\t0\t-\tlaptop\n".utf8)) == nil)
        #expect(ChangeJournal.parseBatch(Data("save\t\(String(repeating: "a", count: 40))\t0\tbad\tlaptop\ta.txt\n".utf8)) == nil)
        let good = ChangeJournal.parseBatch(
            Data("delete\t\(String(repeating: "a", count: 40))\t7\t\(String(repeating: "b", count: 40))\tphone\td/e f.txt\n".utf8))
        #expect(good?.count == 1)
        #expect(good?.first?.change.kind == .delete)
        #expect(good?.first?.via?.hex == String(repeating: "b", count: 40))
        #expect(good?.first?.change.key.rawValue == "d/e f.txt")
        // Blank lines are no changes; a file read as a slice of a larger buffer reads the same.
        let line = { (digit: String, key: String) in "save\t\(String(repeating: digit, count: 40))\t1\t-\tlaptop\t\(key)" }
        let two = "\n" + line("c", "a.txt") + "\n\n" + line("d", "b.txt")
        let slice = Data(("xx" + two).utf8).dropFirst(2)
        #expect(ChangeJournal.parseBatch(slice)?.map(\.change.key.rawValue) == ["a.txt", "b.txt"])
        #expect(ChangeJournal.parseBatch(Data("save\t\(String(repeating: "a", count: 40))\t0\t-\tlaptop\ta\u{1}.txt\n".utf8)) == nil)
    }
}

/// A batch whose every change came through a manifest names those manifests in a `Via:` trailer, and whether every
/// change came through given manifests is answered from it; a batch with one change of its own has none.
@Suite(.timeLimit(.minutes(10))) struct JournalBatchViaTests {
    static func changes(_ count: Int, in test: TestStore) throws -> [Change] {
        let ids = try test.store.saveBatch(
            (0..<count).map { BatchSave(key: DocumentKey(stringLiteral: "v/\($0).md"), content: .text("\($0)\n"), device: "phone") })
        return try test.store.changes().changes.filter { ids.contains($0.version) }
    }

    @Test func aBatchThatCameThroughManifestsNamesThemAndAnswersFromTheTrailer() throws {
        let test = try TestStore()
        let changes = try Self.changes(30, in: test)
        let (first, second) = (ObjectID(hex: String(repeating: "1", count: 40))!, ObjectID(hex: String(repeating: "2", count: 40))!)
        var via: [VersionID: ObjectID] = [:]
        for (index, change) in changes.enumerated() { via[change.version] = index % 2 == 0 ? first : second }
        try test.store.withEngine { engine in
            let repository = engine.repository
            let before = try #require(try repository.reference(ChangeJournal.reference))
            try ChangeJournal(repository: repository).append(changes, via: via)
            let tip = try #require(try repository.reference(ChangeJournal.reference))
            #expect(try test.git("log", "-1", "--format=%(trailers:key=Via,valueonly)", tip.hex) == "\(first.hex) \(second.hex)\n\n")
            // The saveBatch entry below came through nothing, so only a walk that stops above it is answered yes.
            #expect(try ChangeJournal(repository: repository).manifests(from: tip, where: Set([first, second]).contains) == nil)
            // The same entry alone, without its changes file: only the trailer can answer, as it must (the file is not read).
            let entry = try repository.readCommit(tip)
            let lone = try repository.writeCommit(
                tree: repository.writeTree([]), parents: [], author: entry.author, committer: entry.committer, message: entry.message)
            // Only the manifests the changes came through, of those offered.
            let third = ObjectID(hex: String(repeating: "4", count: 40))!
            #expect(try ChangeJournal(repository: repository).manifests(from: lone, where: Set([first, second, third]).contains) == [first, second])
            #expect(try ChangeJournal(repository: repository).manifests(from: lone, where: Set([first]).contains) == nil)
            #expect(before != tip)
        }
    }

    @Test func aBatchWithAChangeOfItsOwnHasNoViaAndIsReadLineByLine() throws {
        let test = try TestStore()
        let changes = try Self.changes(30, in: test)
        let manifest = ObjectID(hex: String(repeating: "3", count: 40))!
        var via: [VersionID: ObjectID] = [:]
        for change in changes.dropFirst() { via[change.version] = manifest }
        try test.store.withEngine { engine in
            let repository = engine.repository
            try ChangeJournal(repository: repository).append(changes, via: via)
            let tip = try #require(try repository.reference(ChangeJournal.reference))
            #expect(try test.git("log", "-1", "--format=%(trailers:key=Via,valueonly)", tip.hex) == "\n")
            let lone = try repository.writeCommit(
                tree: repository.readCommit(tip).tree, parents: [], author: repository.readCommit(tip).author,
                committer: repository.readCommit(tip).committer, message: repository.readCommit(tip).message)
            #expect(try ChangeJournal(repository: repository).manifests(from: lone, where: Set([manifest]).contains) == nil)
            let recorded = try #require(try ChangeJournal(repository: repository).recorded(in: repository.readCommit(tip)))
            #expect(recorded.map(\.via) == [nil] + Array(repeating: Optional(manifest), count: 29))
        }
    }
}
