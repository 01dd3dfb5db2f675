import Foundation
import TestSupport
import Testing
import Truce

/// One hand-written merge: base, the current version ("ours"), the other head ("theirs") and what must come out.
struct StructuredCase: CustomTestStringConvertible, Sendable {
    enum Expected: Sendable {
        /// Clean, with exactly these bytes.
        case merged(String)
        /// A person is needed at exactly these JSON Pointer paths.
        case conflicts([String])
    }

    let rule: String
    let base: String
    let ours: String
    let theirs: String
    let expected: Expected
    var options: [String: String] = [:]

    var testDescription: String { rule }
}

@Suite(.timeLimit(.minutes(10))) struct StructuredMergeTests {
    static let cases: [StructuredCase] = [
        StructuredCase(
            rule: "a member changed on one side takes that side, recursively",
            base: #"{"editor": {"theme": "light", "size": 12}, "zoom": 1}"#,
            ours: #"{"editor": {"theme": "light", "size": 14}, "zoom": 1}"#,
            theirs: #"{"editor": {"theme": "dark", "size": 12}, "zoom": 2}"#,
            expected: .merged(#"{"editor": {"theme": "dark", "size": 14}, "zoom": 2}"#)),
        StructuredCase(
            rule: "a member added on one side and one removed on the other are both kept",
            base: #"{"a": 1, "b": 2, "c": 3}"#, ours: #"{"a": 1, "c": 3}"#, theirs: #"{"a": 1, "b": 2, "n": 9, "c": 3}"#,
            expected: .merged(#"{"a": 1, "n": 9, "c": 3}"#)),
        // Byte-identical heads are no conflict at all (they count as one head); these differ only in layout.
        StructuredCase(
            rule: "the same change on both sides is no conflict",
            base: #"{"a": 1, "b": [1, 2]}"#, ours: #"{"a": 5, "b": [1, 2, 3]}"#, theirs: #"{"a":5,"b":[1,2,3]}"#,
            expected: .merged(#"{"a": 5, "b": [1, 2, 3]}"#)),
        StructuredCase(
            rule: "the same scalar changed differently is a conflict at its path",
            base: #"{"editor": {"theme": "light"}}"#, ours: #"{"editor": {"theme": "dark"}}"#,
            theirs: #"{"editor": {"theme": "solarized"}}"#, expected: .conflicts(["/editor/theme"])),
        StructuredCase(
            rule: "add/add of different values is a conflict",
            base: #"{}"#, ours: #"{"x": 1}"#, theirs: #"{"x": 2}"#, expected: .conflicts(["/x"])),
        StructuredCase(
            rule: "add/add of different objects is a conflict",
            base: #"{}"#, ours: #"{"x": {"a": 1}}"#, theirs: #"{"x": {"b": 1}}"#, expected: .conflicts(["/x"])),
        StructuredCase(
            rule: "a type change against an edit is a conflict",
            base: #"{"a": {"b": 1}}"#, ours: #"{"a": [1]}"#, theirs: #"{"a": {"b": 2}}"#, expected: .conflicts(["/a"])),
        StructuredCase(
            rule: "a member deleted on one side and changed on the other is a conflict",
            base: #"{"a": 1, "b": 1}"#, ours: #"{"b": 1}"#, theirs: #"{"a": 2, "b": 1}"#, expected: .conflicts(["/a"])),
        StructuredCase(
            rule: "identity arrays keep inserts from both sides and apply deletions",
            base: #"{"items": [{"id": 1, "n": "a"}, {"id": 2, "n": "b"}, {"id": 3, "n": "c"}]}"#,
            ours: #"{"items": [{"id": 1, "n": "a"}, {"id": 3, "n": "c"}, {"id": 4, "n": "d"}]}"#,
            theirs: #"{"items": [{"id": 0, "n": "z"}, {"id": 1, "n": "a"}, {"id": 2, "n": "b"}, {"id": 3, "n": "c"}]}"#,
            expected: .merged(#"{"items": [{"id": 0, "n": "z"}, {"id": 1, "n": "a"}, {"id": 3, "n": "c"}, {"id": 4, "n": "d"}]}"#)),
        StructuredCase(
            rule: "edits to one element by identity merge recursively",
            base: #"{"items": [{"id": 1, "n": "a", "q": 1}, {"id": 2, "n": "b", "q": 1}]}"#,
            ours: #"{"items": [{"id": 1, "n": "a", "q": 1}, {"id": 2, "n": "B", "q": 1}]}"#,
            theirs: #"{"items": [{"id": 1, "n": "a", "q": 1}, {"id": 2, "n": "b", "q": 5}]}"#,
            expected: .merged(#"{"items": [{"id": 1, "n": "a", "q": 1}, {"id": 2, "n": "B", "q": 5}]}"#)),
        StructuredCase(
            rule: "a move on one side is kept with an edit on the other",
            base: #"[{"uuid": "a", "v": 1}, {"uuid": "b", "v": 1}, {"uuid": "c", "v": 1}]"#,
            ours: #"[{"uuid": "a", "v": 2}, {"uuid": "b", "v": 1}, {"uuid": "c", "v": 1}]"#,
            theirs: #"[{"uuid": "c", "v": 1}, {"uuid": "a", "v": 1}, {"uuid": "b", "v": 1}]"#,
            expected: .merged(#"[{"uuid": "c", "v": 1}, {"uuid": "a", "v": 2}, {"uuid": "b", "v": 1}]"#)),
        StructuredCase(
            rule: "both sides reordering differently is a conflict at the array",
            base: #"{"l": [{"_id": 1}, {"_id": 2}, {"_id": 3}]}"#, ours: #"{"l": [{"_id": 2}, {"_id": 1}, {"_id": 3}]}"#,
            theirs: #"{"l": [{"_id": 1}, {"_id": 3}, {"_id": 2}]}"#, expected: .conflicts(["/l"])),
        StructuredCase(
            rule: "deleting an element the other side edited is a conflict at the element",
            base: #"{"l": [{"key": "a", "v": 1}, {"key": "b", "v": 1}]}"#, ours: #"{"l": [{"key": "a", "v": 1}]}"#,
            theirs: #"{"l": [{"key": "a", "v": 1}, {"key": "b", "v": 2}]}"#, expected: .conflicts(["/l/1"])),
        StructuredCase(
            rule: "an identity member set per path matches elements by it",
            base: #"{"p": [{"sku": "x", "n": 1}, {"sku": "y", "n": 1}]}"#,
            ours: #"{"p": [{"sku": "y", "n": 1}, {"sku": "x", "n": 1}]}"#,
            theirs: #"{"p": [{"sku": "x", "n": 2}, {"sku": "y", "n": 1}]}"#,
            expected: .merged(#"{"p": [{"sku": "y", "n": 1}, {"sku": "x", "n": 2}]}"#),
            options: ["identityPaths": "/p=sku"]),
        StructuredCase(
            rule: "inserts at different places in a sequence are both kept",
            base: #"{"t": ["a", "b", "c"]}"#, ours: #"{"t": ["a", "x", "b", "c"]}"#, theirs: #"{"t": ["a", "b", "c", "y"]}"#,
            expected: .merged(#"{"t": ["a", "x", "b", "c", "y"]}"#)),
        StructuredCase(
            rule: "a removal beside an unrelated insert are both applied",
            base: #"{"t": ["a", "b", "c"]}"#, ours: #"{"t": ["a", "c"]}"#, theirs: #"{"t": ["a", "b", "x", "c"]}"#,
            expected: .merged(#"{"t": ["a", "x", "c"]}"#)),
        StructuredCase(
            rule: "overlapping changes in a sequence are a conflict at the array",
            base: #"{"t": ["a", "b", "c"]}"#, ours: #"{"t": ["a", "B", "c"]}"#, theirs: #"{"t": ["a", "c"]}"#,
            expected: .conflicts(["/t"])),
        StructuredCase(
            rule: "arrays = sequence merges records as a sequence",
            base: #"{"l": [{"id": 1, "v": 0, "w": 0}]}"#, ours: #"{"l": [{"id": 1, "v": 1, "w": 0}]}"#,
            theirs: #"{"l": [{"id": 1, "v": 0, "w": 1}]}"#, expected: .conflicts(["/l"]), options: ["arrays": "sequence"]),
        StructuredCase(
            rule: "numbers keep their exact text",
            base: #"{"big": 123456789012345678901234567890, "p": 1.50, "e": 1E+2, "x": 0}"#,
            ours: #"{"big": 123456789012345678901234567890, "p": 1.50, "e": 1E+2, "x": 1}"#,
            theirs: #"{"big": 123456789012345678901234567891, "p": 1.50, "e": 1E+2, "x": 0}"#,
            expected: .merged(#"{"big": 123456789012345678901234567891, "p": 1.50, "e": 1E+2, "x": 1}"#)),
        StructuredCase(
            rule: "1.50 and 1.5 are different texts, so changing both ways conflicts",
            base: #"{"p": 1.5}"#, ours: #"{"p": 1.50}"#, theirs: #"{"p": 2}"#, expected: .conflicts(["/p"])),
        StructuredCase(
            rule: "strings compare by their escapes' meaning and keep their spelling",
            base: #"{"s": "caf\u00e9", "n": 1}"#, ours: #"{"s": "café", "n": 1}"#, theirs: #"{"s": "caf\u00e9", "n": 2, "q": "a\/b"}"#,
            expected: .merged(#"{"s": "café", "n": 2, "q": "a\/b"}"#)),
        StructuredCase(
            rule: "NFC and NFD spellings are different strings",
            base: #"{"s": "x"}"#, ours: "{\"s\": \"caf\u{E9}\"}", theirs: "{\"s\": \"cafe\u{301}\"}", expected: .conflicts(["/s"])),
        // theirs adds c after a, the member before it there.
        StructuredCase(
            rule: "the current version's indentation, key order and missing final newline are kept",
            base: "{\n    \"b\": 1,\n    \"a\": 1\n}\n", ours: "{\n\t\"a\": 1,\n\t\"b\": 1\n}",
            theirs: "{\n  \"b\": 2,\n  \"a\": 1,\n  \"c\": {\"d\": [1, 2]}\n}\n",
            expected: .merged("{\n\t\"a\": 1,\n\t\"c\": {\"d\": [1, 2]},\n\t\"b\": 2\n}")),
        StructuredCase(
            rule: "a one-line document the other side laid out on lines takes its lines",
            base: "{\"a\":1,\"b\":[1]}\n", ours: "{\"a\":2,\"b\":[1]}\n", theirs: "{\n  \"a\": 1,\n  \"b\": [\n    1,\n    2\n  ]\n}\n",
            expected: .merged("{\n  \"a\": 2,\n  \"b\": [\n    1,\n    2\n  ]\n}\n")),
        StructuredCase(
            rule: "a one-line current version stays on one line where the other side kept the base's layout",
            base: "{\"a\":1,\"b\":[1]}\n", ours: "{\"a\":2,\"b\":[1]}\n", theirs: "{\"a\":1,\"b\":[1,2]}\n",
            expected: .merged("{\"a\":2,\"b\":[1,2]}\n")),
        StructuredCase(
            rule: "CRLF line ends are kept",
            base: "{\r\n  \"a\": 1,\r\n  \"b\": 1\r\n}\r\n", ours: "{\r\n  \"a\": 2,\r\n  \"b\": 1\r\n}\r\n",
            theirs: "{\r\n  \"a\": 1,\r\n  \"b\": 2\r\n}\r\n", expected: .merged("{\r\n  \"a\": 2,\r\n  \"b\": 2\r\n}\r\n")),
        StructuredCase(
            rule: "line ends the other side changed from CRLF to LF become LF",
            base: "{\r\n  \"a\": 1,\r\n  \"b\": 1\r\n}\r\n", ours: "{\r\n  \"a\": 2,\r\n  \"b\": 1\r\n}\r\n",
            theirs: "{\n  \"a\": 1,\n  \"b\": 2\n}\n", expected: .merged("{\n  \"a\": 2,\n  \"b\": 2\n}\n")),
        StructuredCase(
            rule: "pointer steps escape / and ~",
            base: #"{"a/b": {"c~d": 1}}"#, ours: #"{"a/b": {"c~d": 2}}"#, theirs: #"{"a/b": {"c~d": 3}}"#,
            expected: .conflicts(["/a~1b/c~0d"])),
    ]

    /// Saves the case as a conflict with `merge=structured`: theirs first, ours last so it is current.
    static func makeConflict(_ testCase: StructuredCase, in test: TestStore) throws -> MadeConflict {
        try test.setAttributes("*.json merge=structured\n")
        for (option, value) in testCase.options { try test.setConfig("resolver.structured.\(option)", value) }
        return try test.makeConflict(
            "doc.json", base: .text(testCase.base), heads: [("phone", .text(testCase.theirs)), ("laptop", .text(testCase.ours))])
    }

    @Test(arguments: cases)
    func mergesByTheRule(_ testCase: StructuredCase) async throws {
        let test = try TestStore()
        let made = try Self.makeConflict(testCase, in: test)
        #expect(made.current.deviceName == "laptop")
        let before = snapshot(ofStore: test.path)
        let result = try await test.store.resolve("doc.json", registry: .standard, device: "test")
        switch (testCase.expected, result) {
        case (.merged(let text), .resolved(let version, "structured", .settled)):
            let content = try test.store.contents(of: version)
            #expect(content == .text(text), "\(content?.escaped ?? "deleted")")
            #expect(Set(version.parents) == Set(made.heads.map(\.id)))
            _ = try test.git("fsck", "--strict")
        case (.conflicts(let paths), .needsPerson(let points, "structured", _)):
            #expect(points.map(\.path) == paths)
            #expect(snapshot(ofStore: test.path) == before, "a conflict must leave the store unchanged")
        default:
            Issue.record("expected \(testCase.expected), got \(result)")
        }
    }

    @Test func aConflictPointCarriesThePathTheBaseAndEveryHeadsValue() async throws {
        let test = try TestStore()
        try test.setAttributes("*.json merge=structured\n")
        let made = try test.makeConflict(
            "s.json", base: .text(#"{"l": [{"id": 1, "v": 0}, {"id": 2, "v": 0}], "k": 0}"#),
            heads: [
                ("a", .text(#"{"l": [{"id": 2, "v": 1}, {"id": 1, "v": 0}], "k": 0}"#)),
                ("b", .text(#"{"l": [{"id": 2, "v": 2}, {"id": 1, "v": 0}], "k": 1}"#)),
                ("c", .text(#"{"l": [{"id": 1, "v": 0}, {"id": 2, "v": 3}], "k": 0}"#)),
            ])
        let points = try await test.store.conflictPoints(for: "s.json", registry: .standard)
        let point = try #require(points.first)
        #expect(points.count == 1)
        // The element is at index 1 in the base, though it moved to index 0 in two heads.
        #expect(point.path == "/l/1/v")
        #expect(point.base == .text("0\n"))
        #expect(point.sides.map(\.version) == [made.heads[2].id, made.heads[1].id, made.heads[0].id])
        #expect(point.sides.map(\.text) == [.text("3\n"), .text("2\n"), .text("1\n")])
    }

    @Test func answersPerPathKeepEverythingThatMergedCleanly() async throws {
        let test = try TestStore()
        try test.setAttributes("*.json merge=structured\n")
        let made = try test.makeConflict(
            "s.json", base: .text(#"{"a": 0, "b": 0, "c": 0}"#),
            heads: [("phone", .text(#"{"a": 1, "b": 1, "c": 0}"#)), ("laptop", .text(#"{"a": 2, "b": 2, "c": 5}"#))])
        let version = try #require(
            await test.store.resolve("s.json", answering: ["/a": .theirs, "H2": .text(.text("[7]"))], registry: .standard, device: "me").version)
        #expect(try test.store.contents(of: version) == .text(#"{"a": 1, "b": [7], "c": 5}"#))
        #expect(Set(version.parents) == Set(made.heads.map(\.id)))

        let other = try TestStore()
        try other.setAttributes("*.json merge=structured\n")
        let again = try other.makeConflict(
            "s.json", base: .text(#"{"a": 0}"#), heads: [("phone", .text(#"{"a": 1}"#)), ("laptop", .text(#"{"a": 2}"#))])
        let before = snapshot(ofStore: other.path)
        await #expect(throws: TruceError.self) {
            try await other.store.resolve("s.json", answering: ["/nope": .ours], registry: .standard, device: "me")
        }
        await #expect(throws: TruceError.self) { try await other.store.resolve("s.json", answering: [:], registry: .standard, device: "me") }
        await #expect(throws: TruceError.self) {
            try await other.store.resolve("s.json", answering: ["/a": .both], registry: .standard, device: "me")
        }
        #expect(snapshot(ofStore: other.path) == before)
        let base = try #require(
            await other.store.resolve("s.json", answering: ["/a": .version(again.base.id.hex)], registry: .standard, device: "me").version)
        #expect(try other.store.contents(of: base) == .text(#"{"a": 0}"#))
    }

    @Test func nHeadsFoldDeterministicallyAndInEitherOrderWhenClean() async throws {
        let base = #"{"a": 0, "b": 0, "c": 0, "l": [{"id": 1}]}"#
        let edits = [
            #"{"a": 1, "b": 0, "c": 0, "l": [{"id": 1}, {"id": 2}]}"#, #"{"a": 0, "b": 1, "c": 0, "l": [{"id": 3}, {"id": 1}]}"#,
            #"{"a": 0, "b": 0, "c": 1, "l": [{"id": 1}]}"#,
        ]
        var results: [StructuredValueText] = []
        for order in [[0, 1, 2], [2, 1, 0], [1, 2, 0]] {
            let test = try TestStore()
            try test.setAttributes("*.json merge=structured\n")
            try test.makeConflict("n.json", base: .text(base), heads: order.map { ("d\($0)", .text(edits[$0])) })
            guard case .resolved(let version, _, _) = try await test.store.resolve("n.json", registry: .standard, device: "x") else {
                Issue.record("order \(order) did not merge cleanly")
                continue
            }
            results.append(try StructuredValueText(try #require(try test.store.contents(of: version))))
        }
        #expect(results.count == 3)
        #expect(Set(results).count == 1, "\(results)")
        let merged = try #require(results.first?.object as? [String: Any])
        #expect(merged["a"] as? Int == 1 && merged["b"] as? Int == 1 && merged["c"] as? Int == 1)
        #expect((merged["l"] as? [[String: Int]])?.compactMap { $0["id"] }.sorted() == [1, 2, 3])
    }

    @Test func newElementsBothSidesPutAtOnePlaceGetOneOrderWhicheverSideIsCurrent() async throws {
        let base = Data(#"{"l": [{"id": "a"}, {"id": "b"}]}"#.utf8)
        let ours = Data(#"{"l": [{"id": "a"}, {"id": "x"}, {"id": "y"}, {"id": "b"}]}"#.utf8)
        let theirs = Data(#"{"l": [{"id": "a"}, {"id": "c"}, {"id": "b"}, {"id": "z"}]}"#.utf8)
        let forward = try StructuredMerge.mergeFiles(base: base, current: ours, other: theirs, path: "l.json")
        let backward = try StructuredMerge.mergeFiles(base: base, current: theirs, other: ours, path: "l.json")
        #expect(forward.conflictCount == 0 && backward.conflictCount == 0)
        // After "a" both sides inserted: the group whose first identity sorts first ("c") goes first, each group in its own order.
        #expect(
            forward.content == Data(#"{"l": [{"id": "a"}, {"id": "c"}, {"id": "x"}, {"id": "y"}, {"id": "b"}, {"id": "z"}]}"#.utf8),
            "\(forward.content.escaped)")
        #expect(try StructuredValueText(forward.content) == StructuredValueText(backward.content))
    }

    static let badInputs: [(String, String, String)] = [
        ("not valid JSON", #"{"a": 1,}"#, "not valid JSON"),
        ("a byte-order mark", "\u{FEFF}{\"a\": 2}", "byte-order mark"),
        ("64 levels deep", String(repeating: "[", count: 64) + String(repeating: "]", count: 64), "64 levels deep"),
        ("a lone surrogate", #"{"a": "\ud800"}"#, "lone surrogate"),
    ]

    @Test(arguments: badInputs.map(\.0))
    func badInputPassesToTheFallbackWithTheReasonAndWritesNothing(_ name: String) async throws {
        let (_, content, reason) = try #require(Self.badInputs.first { $0.0 == name })
        let test = try TestStore()
        try test.setAttributes("*.json merge=structured\n")
        try test.setConfig("resolver.structured.fallback", "list-conflicts")
        try test.makeConflict("bad.json", base: .text(#"{"a": 0}"#), heads: [("phone", .text(content)), ("laptop", .text(#"{"a": 3}"#))])
        let before = snapshot(ofStore: test.path)
        let result = try await test.store.resolve("bad.json", registry: .standard, device: "x")
        guard case .needsPerson(let points, "list-conflicts", let reasons) = result else {
            Issue.record("\(result)")
            return
        }
        #expect(reasons.count == 1 && reasons[0].hasPrefix("structured: version ") && reasons[0].contains(reason), "\(reasons)")
        #expect(points.allSatisfy { $0.path == nil })
        #expect(snapshot(ofStore: test.path) == before)
    }

    @Test func invalidUTF8InsideAStringPasses() async throws {
        let test = try TestStore()
        try test.setAttributes("*.json merge=structured\n")
        var invalid = Data(#"{"a": "x"#.utf8)
        invalid.append(contentsOf: [0xC3, 0x28])
        invalid.append(contentsOf: Data(#""}"#.utf8))
        try test.makeConflict("u.json", base: .text(#"{"a": 0}"#), heads: [("phone", invalid), ("laptop", .text(#"{"a": 3}"#))])
        let before = snapshot(ofStore: test.path)
        let result = try await test.store.resolve("u.json", registry: .standard, device: "x")
        guard case .needsPerson(_, _, let reasons) = result else {
            Issue.record("\(result)")
            return
        }
        #expect(reasons.contains { $0.contains("not valid UTF-8") }, "\(reasons)")
        #expect(snapshot(ofStore: test.path) == before)
    }

    @Test func explainListsTheArrayRules() async throws {
        let rules = try MergeRules(ResolverOptions(resolverName: "structured", values: ["identityPaths": "/teams/*/members=email"]))
        #expect(
            StructuredMerge().settings(for: ResolverOptions(resolverName: "structured", values: ["identityPaths": "/teams/*/members=email"]))
                == rules.summary)
        #expect(rules.summary.contains("array at /teams/*/members is matched by email"))
        #expect(throws: TruceError.self) { try MergeRules(ResolverOptions(resolverName: "structured", values: ["identityPaths": "teams=x"])) }
        #expect(throws: TruceError.self) { try MergeRules(ResolverOptions(resolverName: "structured", values: ["arrays": "sometimes"])) }
    }
}

/// A JSON document compared by meaning (Foundation's objects), so formatting does not count.
struct StructuredValueText: Hashable, CustomStringConvertible {
    let object: Any
    let canonical: Data

    init(_ data: Data) throws {
        object = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        canonical = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed])
    }

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.canonical == rhs.canonical }
    func hash(into hasher: inout Hasher) { hasher.combine(canonical) }
    var description: String { String(decoding: canonical, as: UTF8.self) }
}
