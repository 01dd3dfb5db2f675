import Foundation
import TestSupport
import Testing
import Truce

/// A person settling a conflict through a session: answers, undo and redo, previews, commit, park and continue.
@Suite(.timeLimit(.minutes(10)))
struct ResolutionSessionTests {
    static let base = "one\ntwo\nthree\nfour\nfive\n"

    /// A three-head conflict with two line hunks: every head changes line 1 and line 5 its own way.
    static func threeHeads() throws -> (TestStore, MadeConflict) {
        let test = try TestStore()
        let made = try test.makeConflict(
            "notes/todo.md", base: .text(base),
            heads: [
                ("laptop", .text("ONE\ntwo\nthree\nfour\nfive\n")), ("phone", .text("uno\ntwo\nthree\nfour\nFIVE\n")),
                ("tablet", .text("1\ntwo\nthree\nfour\n5\n")),
            ])
        return (test, made)
    }

    @Test func answeredPointByPointWithUndoTheCommitIsTheOneTheSameAnswersThroughTakeWrite() async throws {
        let (test, made) = try Self.threeHeads()
        // A twin of the store: the same heads, so the same answers must give the same commit there.
        let twin = TemporaryDirectory("truce-twin")
        _ = try run("/bin/cp", ["-a", test.path, twin.file("store")])
        var session = try await test.store.resolutionSession(for: "notes/todo.md")
        #expect(session.points.map(\.id) == ["H1", "H2"])
        #expect(session.heads.map(\.id) == [made.current.id, made.heads[1].id, made.heads[0].id])
        #expect(session.remaining == 2 && !session.isComplete && session.nextUnanswered?.id == "H1")
        #expect(
            session.label(of: session.points[0].sides[0]).hasPrefix("tablet 20")
                && session.label(of: session.points[0].sides[0]).hasSuffix("(current)"))
        #expect(throws: TruceError.invalidAnswer("H1=theirs is ambiguous with 2 conflict versions; name a version id")) {
            try session.answer("H1", with: .theirs)
        }
        try session.answer("H1", with: .version(made.heads[0].id.hex))
        try session.answer("H2", with: .both)
        #expect(session.isComplete)
        session.undo()
        #expect(session.answers["H2"] == nil && session.remaining == 1 && session.canRedo)
        try session.answer("H2", with: .text(Data("five!\n".utf8)))
        #expect(!session.canRedo, "a new answer forgets what was undone")
        // The preview with both points answered is the document the commit writes.
        let preview = try #require(try await session.preview())
        #expect(preview == .text("ONE\ntwo\nthree\nfour\nfive!\n"))
        let result = try await test.store.commit(session, device: "person")
        let written = try #require(result.version)
        #expect(try test.store.contents(of: written) == preview)
        #expect(written.parents.count == 3 && written.resolvedBy == "person")

        let same = try DocumentStore.open(at: twin.file("store"))
        let taken = try await same.resolve(
            "notes/todo.md", answering: ["H1": .version(made.heads[0].id.hex), "H2": .text(Data("five!\n".utf8))], device: "person")
        #expect(taken.version?.id == written.id, "a session and --take wrote different commits for the same answers")
        #expect(try test.git("log", "-1", "--format=%(trailers:key=Resolved-By,valueonly)", written.id.hex) == "person\n\n")
    }

    @Test func thePreviewShowsOpenPointsBetweenMarkersInTheChosenStyle() async throws {
        let test = try TestStore()
        try test.makeConflict(
            "a.txt", base: .text("x\n<<<<<<< not a marker\nz\n"),
            heads: [("laptop", .text("X\n<<<<<<< not a marker\nz\n")), ("phone", .text("x2\n<<<<<<< not a marker\nz\n"))])
        var session = try await test.store.resolutionSession(for: "a.txt")
        let merge = try #require(try await session.preview())
        let lines = String(decoding: merge, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        // Markers one longer than the marker-like line the content already holds.
        #expect(lines[0].hasPrefix("<<<<<<<< phone ") && lines[2] == "========" && lines[4].hasPrefix(">>>>>>>> laptop "), "\(lines)")
        #expect(lines[1] == "x2" && lines[3] == "X" && lines[5] == "<<<<<<< not a marker")
        let diff3 = String(decoding: try #require(try await session.preview(style: .diff3)), as: UTF8.self)
        #expect(diff3.contains("\n|||||||| base ") && diff3.contains("\nx\n========\n"), "\(diff3)")
        try session.answer("H1", with: .ours)
        #expect(try await session.preview() == .text("x2\n<<<<<<< not a marker\nz\n"))
    }

    @Test func aParkedSessionContinuesOnAnotherReplicaAndItsAnswersFollowThePointsByContent() async throws {
        let (test, made) = try Self.threeHeads()
        var session = try await test.store.resolutionSession(for: "notes/todo.md")
        try session.answer("H2", with: .version(made.heads[1].id.hex))
        let parked = try test.store.park(session, device: "laptop")
        #expect(parked.key.rawValue.hasPrefix(".truce/sessions/"))
        #expect(try await test.store.resolutionSession(for: "notes/todo.md").answers == ["H2": .version(made.heads[1].id.hex)])

        // Another replica gets the conflict and the parked session by sync, and a fourth head meanwhile: a new first
        // hunk at the top renumbers the points, and the answer follows its point by content.
        let other = try TestStore()
        _ = try await other.store.sync(with: test.path)
        try other.store.save(.text("zero\nONE\ntwo\nthree\nfour\nFIVE\n"), to: "notes/todo.md", device: "desk", base: made.heads[1].id)
        var resumed = try await other.store.resolutionSession(for: "notes/todo.md")
        let resumption = try #require(resumed.resumption)
        #expect(resumption.parkedBy == "laptop" && resumption.newVersionsArrived && resumption.kept == 1 && resumption.dropped == 0)
        let fifth = try #require(resumed.points.first { $0.sides.contains { $0.text == .text("FIVE\n") } })
        #expect(resumed.answers[fifth.id] != nil, "the parked answer was not matched to its point: \(resumed.answers)")
        for point in resumed.points where resumed.answers[point.id] == nil { try resumed.answer(point.id, with: .ours) }
        let result = try await other.store.commit(resumed, device: "desk")
        #expect(result.version != nil)
        // Committing forgets the parked session.
        #expect(try other.store.state(of: parked.key) == .deleted)
        #expect(try other.git("fsck", "--strict").isEmpty)
    }

    @Test func aSessionThatNewVersionsOvertookIsRefusedAndWritesNothing() async throws {
        let (test, made) = try Self.threeHeads()
        var session = try await test.store.resolutionSession(for: "notes/todo.md")
        try session.take(made.current.id)
        #expect(session.isComplete)
        try test.store.save(.text("late\n"), to: "notes/todo.md", device: "late", base: made.heads[0].id)
        let before = snapshot(ofStore: test.path)
        await #expect(throws: TruceError.self) { try await test.store.commit(session) }
        #expect(snapshot(ofStore: test.path) == before)
    }

    @Test func aSettledDocumentHasNoSession() async throws {
        let test = try TestStore()
        try test.store.save(.text("x\n"), to: "a.txt", device: "laptop")
        await #expect(throws: TruceError.notInConflict("a.txt")) { try await test.store.resolutionSession(for: "a.txt") }
    }

    @Test func aJSONConflictIsAnsweredByPath() async throws {
        let test = try TestStore()
        try test.setAttributes("*.json merge=structured\n")
        try test.makeConflict(
            "settings.json", base: .text(#"{"theme": "light", "size": 1}"# + "\n"),
            heads: [("laptop", .text(#"{"theme": "dark", "size": 1}"# + "\n")), ("phone", .text(#"{"theme": "solarized", "size": 2}"# + "\n"))])
        var session = try await test.store.resolutionSession(for: "settings.json")
        #expect(session.points.map(\.path) == ["/theme"])
        // Open, the member is drawn between markers labelled with each head; the rest merged as it will be.
        let open = String(decoding: try #require(try await session.preview(style: .diff3)), as: UTF8.self)
        #expect(open.contains("<<<<<<< phone ") && open.contains("\"theme\": \"solarized\"") && open.contains("||||||| base "), "\(open)")
        #expect(open.contains("\"theme\": \"dark\"") && open.contains(">>>>>>> laptop ") && open.contains("\"size\": 2"), "\(open)")
        try session.answer("/theme", with: .theirs)
        #expect(session.isComplete)
        let result = try await test.store.commit(session, device: "person")
        let content = try test.store.contents(of: try #require(result.version))
        #expect(content == .text(#"{"theme": "dark", "size": 2}"# + "\n"))
    }
}
