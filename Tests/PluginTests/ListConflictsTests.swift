import Foundation
import TestSupport
import Testing
import Truce

@Suite(.timeLimit(.minutes(10))) struct ListConflictsTests {
    static let base = "a\nb\nc\nd\ne\nf\ng\n"

    /// Three heads: all change line b differently, only the laptop changes f, phone and tablet both add after g.
    func threeHeads() throws -> (TestStore, MadeConflict) {
        let test = try TestStore()
        try test.setAttributes("*.txt merge=list-conflicts\n")
        let made = try test.makeConflict(
            "n.txt", base: .text(Self.base),
            heads: [
                ("laptop", .text("a\nB1\nc\nd\ne\nF\ng\n")),
                ("phone", .text("a\nB2\nc\nd\ne\nf\ng\nphone\n")),
                ("tablet", .text("a\nB3\nc\nd\ne\nf\ng\ntablet\n")),
            ])
        return (test, made)
    }

    @Test func pointsCoverEveryHeadWithStableIDsAndRanges() async throws {
        let (test, made) = try threeHeads()
        let result = try await test.store.resolve("n.txt", registry: .standard, device: "x")
        guard case .needsPerson(let points, "list-conflicts", _) = result else {
            Issue.record("\(result)")
            return
        }
        #expect(points.map(\.id) == ["H1", "H2"])
        #expect(points[0].baseLines == ConflictPoint.LineRange(start: 2, count: 1))
        #expect(points[0].base == .text("b\n"))
        #expect(points[0].sides.map(\.version) == [made.heads[2].id, made.heads[1].id, made.heads[0].id])
        #expect(points[0].sides.map(\.text) == [.text("B3\n"), .text("B2\n"), .text("B1\n")])
        #expect(points[0].sides.map(\.isCurrent) == [true, false, false])
        #expect(points[1].baseLines == ConflictPoint.LineRange(start: 8, count: 0))
        #expect(points[1].sides.map(\.text) == [.text("tablet\n"), .text("phone\n"), Data()])
        // Asking again gives the same points.
        #expect(try await test.store.conflictPoints(for: "n.txt") == points)
    }

    @Test func answersWriteTheResolutionAndKeepSettledChanges() async throws {
        let (test, made) = try threeHeads()
        let version = try await #require(
            test.store.resolve("n.txt", answering: ["H1": .version(String(made.heads[0].id.hex.prefix(8))), "H2": .both], device: "x").version)
        #expect(try test.store.contents(of: version) == .text("a\nB1\nc\nd\ne\nF\ng\ntablet\nphone\n"))
        #expect(version.resolvedBy == "person")
        #expect(version.parents == [made.heads[2].id, made.heads[1].id, made.heads[0].id])
        #expect(try test.store.state(of: "n.txt") == .settled)
    }

    @Test(arguments: [
        (["H1": HunkAnswer.ours, "H2": .base], "a\nB3\nc\nd\ne\nF\ng\n"),
        (["H1": .base, "H2": .text(.text("mine\n"))], "a\nb\nc\nd\ne\nF\ng\nmine\n"),
    ])
    func eachChoiceTakesItsText(answers: [String: HunkAnswer], expected: String) throws {
        let (test, _) = try threeHeads()
        let version = try #require(test.store.resolve("n.txt", answers: answers, device: "x").version)
        #expect(try test.store.contents(of: version) == .text(expected))
    }

    @Test func badAnswersAreClearErrorsThatChangeNothing() async throws {
        let (test, _) = try threeHeads()
        let before = snapshot(ofStore: test.path)
        let cases: [([String: HunkAnswer], String)] = [
            (["H1": .ours, "H2": .ours, "H9": .ours], "there is no conflict point H9 in n.txt; points: H1, H2"),
            (["H1": .ours], "conflict point H2 has no answer"),
            (["H1": .theirs, "H2": .ours], "H1=theirs is ambiguous with 2 conflict versions; name a version id"),
            (["H1": .version("abcdef12"), "H2": .ours], "H1=abcdef12: no head or base of n.txt has that id"),
        ]
        for (answers, message) in cases {
            #expect(throws: TruceError.invalidAnswer(message)) { try test.store.resolve("n.txt", answers: answers, device: "x") }
        }
        #expect(snapshot(ofStore: test.path) == before)
    }

    @Test func answeringADocumentNotInConflictIsAnError() async throws {
        let test = try TestStore()
        try test.store.save(.text("x\n"), to: "a.txt", device: "x")
        let before = snapshot(ofStore: test.path)
        #expect(throws: TruceError.notInConflict("a.txt")) { try test.store.resolve("a.txt", answers: ["H1": .ours], device: "x") }
        #expect(throws: TruceError.notInConflict("a.txt")) { try test.store.resolve("a.txt", content: .text("y\n"), device: "x") }
        #expect(throws: TruceError.documentNotFound("b.txt")) { try test.store.conflictPoints(of: "b.txt") }
        #expect(snapshot(ofStore: test.path) == before)
    }

    @Test func aDeletionAgainstAnEditIsOneWholeDocumentPoint() async throws {
        let test = try TestStore()
        let made = try test.makeConflict("a.txt", base: .text("x\n"), heads: [("phone", nil), ("laptop", .text("y\n"))])
        let points = try await test.store.conflictPoints(for: "a.txt")
        #expect(points.count == 1 && points[0].isWholeDocument)
        #expect(points[0].sides.map(\.text) == [.text("y\n"), nil])
        let settled = try await #require(test.store.resolve("a.txt", answering: ["H1": .version(made.heads[0].id.hex)], device: "x").version)
        #expect(settled.isDeletion)
        #expect(try test.store.state(of: "a.txt") == .deleted)
    }

    @Test func aWholeFileFromAPersonSettlesIt() async throws {
        let (test, _) = try threeHeads()
        let version = try await #require(test.store.resolve("n.txt", to: .text("edited by hand\n"), device: "x").version)
        #expect(try test.store.contents(of: version) == .text("edited by hand\n"))
    }
}
