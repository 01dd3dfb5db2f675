import Foundation
import TestSupport
import Testing
import Truce

/// Where a structured merge used to give up: an object moved on one side and edited on the other, and keys that occur
/// more than once in an object.
@Suite(.timeLimit(.minutes(10))) struct StructuredMovesAndDuplicatesTests {
    static func merge(_ base: String, _ current: String, _ other: String) throws -> (text: String, conflicts: Int) {
        let result = try StructuredMerge.mergeFiles(
            base: Data(base.utf8), current: Data(current.utf8), other: Data(other.utf8), path: "x.json")
        return (String(decoding: result.content, as: UTF8.self), result.conflictCount)
    }

    static let base = "{\n  \"server\": {\"host\": \"a\", \"port\": 1},\n  \"x\": 1\n}\n"

    @Test(arguments: [
        // Renamed on one side, edited on the other: the edit follows the rename.
        (
            "{\n  \"backend\": {\"host\": \"a\", \"port\": 1},\n  \"x\": 1\n}\n", "{\n  \"server\": {\"host\": \"a\", \"port\": 2},\n  \"x\": 1\n}\n",
            "{\n  \"backend\": {\"host\": \"a\", \"port\": 2},\n  \"x\": 1\n}\n"
        ),
        // Moved into an object the move made, the other side edited it and something else.
        (
            "{\n  \"x\": 1,\n  \"net\": {\"main\": {\"host\": \"a\", \"port\": 1}}\n}\n",
            "{\n  \"server\": {\"host\": \"b\", \"port\": 1},\n  \"x\": 2\n}\n",
            "{\n  \"x\": 2,\n  \"net\": {\"main\": {\"host\": \"b\", \"port\": 1}}\n}\n"
        ),
    ])
    func anEditFollowsAnObjectTheOtherSideMoved(moved: String, edited: String, expected: String) throws {
        let forward = try Self.merge(Self.base, moved, edited)
        #expect(forward.conflicts == 0)
        #expect(forward.text == expected, "\(forward.text.debugDescription)")
        // The same with the sides swapped: the current side's layout, the same values.
        let backward = try Self.merge(Self.base, edited, moved)
        #expect(backward.conflicts == 0)
        #expect(try StructuredValueText(Data(backward.text.utf8)) == StructuredValueText(Data(expected.utf8)), "\(backward.text)")
    }

    @Test func aMoveThatIsNotUnambiguousStaysAConflict() throws {
        // Two equal objects removed and two added: which went where is a guess, so the edit does not follow.
        let base = "{\"a\": {\"v\": 1}, \"b\": {\"v\": 1}, \"c\": 0}"
        let moved = "{\"a2\": {\"v\": 1}, \"b2\": {\"v\": 1}, \"c\": 0}"
        let edited = "{\"a\": {\"v\": 2}, \"b\": {\"v\": 1}, \"c\": 0}"
        #expect(try Self.merge(base, moved, edited).conflicts == 1)
        // An object moved and edited on the moving side is not the same object any more: a removal against an edit.
        let movedAndEdited = "{\n  \"backend\": {\"host\": \"z\", \"port\": 1},\n  \"x\": 1\n}\n"
        #expect(try Self.merge(Self.base, movedAndEdited, "{\n  \"server\": {\"host\": \"a\", \"port\": 2},\n  \"x\": 1\n}\n").conflicts == 1)
        // A scalar "moved" is a removal and an addition of equal values: the other side's edit of it conflicts.
        #expect(try Self.merge("{\"a\": 1, \"z\": 0}", "{\"b\": 1, \"z\": 0}", "{\"a\": 2, \"z\": 0}").conflicts == 1)
    }

    /// The rule: the n-th member with a key in one version is the n-th with that key in the others.
    @Test func duplicateKeysMergeOccurrenceByOccurrence() throws {
        let base = "{\"a\": 1, \"b\": 0, \"a\": 2}"
        // Each side edits a different occurrence, and something else.
        let merged = try Self.merge(base, "{\"a\": 1, \"b\": 5, \"a\": 3}", "{\"a\": 9, \"b\": 0, \"a\": 2}")
        #expect(merged.conflicts == 0)
        #expect(merged.text == "{\"a\": 9, \"b\": 5, \"a\": 3}")
        // One side removes the second occurrence, the other edits the first: merged occurrence by occurrence, a reader
        // that keeps the last one would read 7, which neither side gave it (the first side's reads 1, the second's 2).
        let misleading = try Self.merge(base, "{\"a\": 1, \"b\": 0}", "{\"a\": 7, \"b\": 0, \"a\": 2}")
        #expect(misleading.conflicts == 1)
        #expect(misleading.text.hasPrefix("<<<<<<< ours\n{\"a\": 1, \"b\": 0}"), "\(misleading.text)")
        // The same edits where the key occurs once are no conflict.
        #expect(try Self.merge("{\"a\": 1, \"b\": 0}", "{\"a\": 1, \"b\": 5}", "{\"a\": 7, \"b\": 0}").text == "{\"a\": 7, \"b\": 5}")
        // Both edit the second occurrence differently: one conflict, at the key's path.
        let conflicted = try Self.merge(base, "{\"a\": 1, \"b\": 0, \"a\": 3}", "{\"a\": 1, \"b\": 0, \"a\": 4}")
        #expect(conflicted.conflicts == 1)
        #expect(conflicted.text.contains("<<<<<<< ours\n  \"a\": 3\n=======\n  \"a\": 4\n>>>>>>> theirs"), "\(conflicted.text)")
    }

    @Test func aStoreResolvesADocumentWithDuplicateKeysByStructure() async throws {
        let test = try TestStore()
        try test.setAttributes("*.json merge=structured\n")
        try test.makeConflict(
            "d.json", base: .text("{\"k\": 1, \"k\": 2, \"n\": 0}\n"),
            heads: [("phone", .text("{\"k\": 1, \"k\": 3, \"n\": 0}\n")), ("laptop", .text("{\"k\": 1, \"k\": 2, \"n\": 1}\n"))])
        let result = try await test.store.resolve("d.json", registry: .standard, device: "x")
        guard case .resolved(let version, "structured", .settled) = result else {
            Issue.record("\(result)")
            return
        }
        #expect(try test.store.contents(of: version) == .text("{\"k\": 1, \"k\": 3, \"n\": 1}\n"))
    }

    /// In a store too, a side that left the document as the base has it gives the other side's bytes whole.
    @Test func aStoreResolutionKeepsTheChangedSidesBytesWhenTheOtherChangedNothing() async throws {
        let test = try TestStore()
        try test.setAttributes("*.json merge=structured\n")
        let base = Data.text("{\"a\": 1, \"b\": [1, 2]}\n")
        let reformatted = Data.text("{\n    \"a\": 1,\n    \"b\": [\n        1,\n        3\n    ]\n}")
        try test.makeConflict("r.json", base: base, heads: [("phone", reformatted), ("laptop", base)])
        let result = try await test.store.resolve("r.json", registry: .standard, device: "x")
        #expect(try test.store.contents(of: #require(result.version)) == reformatted)
    }
}

/// `siblings = ask`, for the files where a clean merge of neighbouring edits is not wanted, chosen per path through a
/// name of its own (`resolver.<name>.uses = structured`).
@Suite(.timeLimit(.minutes(10))) struct StructuredSiblingsTests {
    static let base = Data.text("{\n  \"greeting\": \"Hello\",\n  \"farewell\": \"Bye\",\n  \"meta\": {\"v\": 1}\n}\n")
    static let ours = Data.text("{\n  \"greeting\": \"Hello there\",\n  \"farewell\": \"Bye\",\n  \"meta\": {\"v\": 1}\n}\n")
    static let theirs = Data.text("{\n  \"greeting\": \"Hello\",\n  \"farewell\": \"Goodbye\",\n  \"meta\": {\"v\": 1}\n}\n")

    @Test func translationsRoutedToACautiousNameAskWhereOtherJSONMerges() async throws {
        let test = try TestStore()
        try test.store.route("*.json", to: "structured")
        try test.store.route("locales/*.json", to: "careful-json", options: ["uses": "structured", "siblings": "ask"])
        for key: DocumentKey in ["locales/en.json", "settings.json"] {
            try test.makeConflict(key, base: Self.base, heads: [("phone", Self.ours), ("laptop", Self.theirs)])
        }
        let settings = try await test.store.resolve("settings.json", device: "x")
        guard case .resolved(let version, "structured", .settled) = settings else {
            Issue.record("\(settings)")
            return
        }
        #expect(
            try test.store.contents(of: version)
                == .text("{\n  \"greeting\": \"Hello there\",\n  \"farewell\": \"Goodbye\",\n  \"meta\": {\"v\": 1}\n}\n"))

        let points = try await test.store.conflictPoints(for: "locales/en.json")
        #expect(points.map(\.path) == [""], "\(points)")
        #expect(points.first?.reason?.contains("siblings = ask") == true)
        guard case .needsPerson = try await test.store.resolve("locales/en.json", device: "x") else {
            Issue.record("a cautious path merged neighbouring edits")
            return
        }
        // The person's answer settles it: the current version's object, whole.
        let current = try test.store.contents(of: "locales/en.json")
        let answered = try await test.store.resolve("locales/en.json", answering: ["H1": .ours], device: "x")
        guard case .resolved(let chosen, _, _) = answered else {
            Issue.record("\(answered)")
            return
        }
        #expect(try test.store.contents(of: chosen) == current)
        #expect([Self.ours, Self.theirs].contains(current))
    }

    @Test func siblingsAskLeavesEditsOfOneMemberAndOfDifferentObjectsAlone() throws {
        var rules = MergeRules()
        rules.siblings = .ask
        func merge(_ base: String, _ ours: String, _ theirs: String) throws -> Int {
            try StructuredMerge.mergeFiles(
                base: Data(base.utf8), current: Data(ours.utf8), other: Data(theirs.utf8), path: "x.json",
                rules: rules
            ).conflictCount
        }
        // Different objects' members: each object changed on one side only.
        #expect(
            try merge("{\"a\": {\"x\": 1}, \"b\": {\"y\": 1}}", "{\"a\": {\"x\": 2}, \"b\": {\"y\": 1}}", "{\"a\": {\"x\": 1}, \"b\": {\"y\": 2}}")
                == 0)
        // The same change on both sides.
        #expect(try merge("{\"a\": 1, \"b\": 1}", "{\"a\": 2, \"b\": 1}", "{\"a\": 2, \"b\": 1}") == 0)
        // Neighbours in one object: a person.
        #expect(try merge("{\"a\": 1, \"b\": 1}", "{\"a\": 2, \"b\": 1}", "{\"a\": 1, \"b\": 2}") == 1)
        // A member added beside one edited.
        #expect(try merge("{\"a\": 1}", "{\"a\": 2}", "{\"a\": 1, \"n\": 0}") == 1)
    }
}
