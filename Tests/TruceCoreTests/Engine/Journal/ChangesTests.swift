import Foundation
import TestSupport
import Testing

@testable import TruceCore

@Suite(.timeLimit(.minutes(10))) struct ChangesTests {
    @Test func everySaveDeletionAndResolutionIsListedInOrder() async throws {
        let test = try TestStore()
        let made = try test.makeConflict("a.txt", base: .text("0\n"), heads: [("laptop", .text("1\n")), ("phone", .text("2\n"))])
        let resolution = try await #require(test.store.resolve("a.txt", to: .text("3\n"), device: "tablet").version)
        let deletion = try test.store.delete("a.txt", device: "phone")
        let everything = try test.store.changes()
        // The person's answer is recorded in the same write as the resolution: a change of Truce's own, by them.
        #expect(everything.changes.filter(\.key.isTruceRecord).map { "\($0.kind) \($0.author)" } == ["save tablet"])
        let history = ChangeHistory(changes: everything.changes.filter { !$0.key.isTruceRecord }, token: everything.token)
        #expect(history.changes.map(\.kind) == [.save, .save, .save, .resolution, .delete])
        // In the order written: the fixture writes the current version (the phone's) before the other head.
        #expect(history.changes.map(\.version) == [made.base.id, made.current.id, made.heads[0].id, resolution.id, deletion.id])
        #expect(history.changes.map(\.author) == ["origin", "phone", "laptop", "tablet", "phone"])
        #expect(history.changes.allSatisfy { $0.key == "a.txt" })
        #expect(history.changes[1].date == made.current.modificationDate && history.changes[2].date == made.heads[0].modificationDate)
        // The journal is plain git history.
        #expect(try test.git("log", "--format=%s", "refs/truce/journal").split(separator: "\n").first == "delete a.txt")
    }

    @Test func aTokenGivesOnlyLaterChangesAndCanExcludeAnAuthor() async throws {
        let test = try TestStore()
        try test.store.save(.text("1\n"), to: "a.txt", device: "laptop")
        let token = try test.store.changes().token
        #expect(try test.store.changes(since: token).changes.isEmpty)
        try test.store.save(.text("2\n"), to: "b.txt", device: "phone")
        try test.store.save(.text("3\n"), to: "a.txt", device: "laptop")
        let later = try test.store.changes(since: token)
        #expect(later.changes.map(\.key) == ["b.txt", "a.txt"])
        #expect(try test.store.changes(since: token, excludingAuthor: "laptop").changes.map(\.author) == ["phone"])
        #expect(try test.store.changes(since: later.token).changes.isEmpty)
        // The text form survives a restart: parse it back and ask a freshly opened store.
        let reopened = try DocumentStore.open(at: test.path)
        #expect(try reopened.changes(since: #require(ChangeHistory.Token(token.description))).changes.count == 2)
        // Authors are compared by bytes: café in NFD is another device than café in NFC.
        try test.store.save(.text("4\n"), to: "a.txt", device: "caf\u{E9}")
        let accented = try test.store.changes(since: later.token, excludingAuthor: "cafe\u{301}").changes
        #expect(accented.map { Array($0.author.utf8) } == [Array("caf\u{E9}".utf8)])
        #expect(try test.store.changes(since: later.token, excludingAuthor: "caf\u{E9}").changes.isEmpty)
    }

    @Test func theCostFollowsTheChangesNotTheStore() async throws {
        let test = try TestStore()
        for index in 0..<150 { try test.store.save(.text("\(index)\n"), to: DocumentKey("docs/\(index).txt"), device: "bulk") }
        let token = try test.store.changes().token
        for index in 0..<3 { try test.store.save(.text("new\n"), to: DocumentKey("docs/\(index).txt"), device: "laptop") }
        let reopened = try DocumentStore.open(at: test.path)
        let before = reopened.instrumentation.commitsRead
        #expect(try reopened.changes(since: token).changes.count == 3)
        #expect(reopened.instrumentation.commitsRead - before == 3)
    }

    @Test(arguments: ["", "garbage", "t1-xyz", "t2-0000000000000000000000000000000000000000"])
    func tokensThatDoNotParseAreRejected(text: String) {
        #expect(ChangeHistory.Token(text) == nil)
    }

    @Test func aTokenFromAnotherStoreIsAnError() async throws {
        let test = try TestStore()
        let other = try TestStore()
        try test.store.save(.text("1\n"), to: "a.txt", device: "laptop")
        try other.store.save(.text("other\n"), to: "a.txt", device: "phone")
        let foreign = try other.store.changes().token
        #expect {
            try test.store.changes(since: foreign)
        } throws: { error in
            guard case .invalidToken(let text, _) = error as? TruceError else { return false }
            return text == foreign.description
        }
        let empty = try TestStore()
        #expect(throws: TruceError.invalidToken(foreign.description, reason: "this store has no changes yet")) {
            try empty.store.changes(since: foreign)
        }
    }
}
