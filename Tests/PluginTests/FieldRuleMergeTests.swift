import Foundation
import TestSupport
import Testing
import Truce
import TruceTesting

/// Merge rules per field (`FieldRules`) in the structured merge: each rule against a model of it over N heads, the
/// notes app the rules are for, untouched bytes, and a rule that cannot apply.
@Suite(.timeLimit(.minutes(10))) struct FieldRuleMergeTests {
    static func minute(_ minute: Int) -> Date { ConflictFixture.date(minute: minute) }

    /// Resolves the fixture's conflict by structure under `rules`.
    static func merge(_ fixture: ConflictFixture, rules: [FieldRule]) async throws -> ResolutionOutcome {
        var context = try fixture.context(resolverName: "structured")
        context.fieldRules = rules
        return try await StructuredMerge().resolve(try fixture.conflictSet(), context: context)
    }

    static func parsed(_ data: Data?) throws -> [String: Any] {
        let content = try #require(data)
        return try #require(try JSONSerialization.jsonObject(with: content) as? [String: Any])
    }

    /// `{"v": VALUE, "other": N}`: the field and something no rule names.
    static func document(_ value: String?, other: Int = 0) -> String {
        value.map { "{\"v\": \($0), \"other\": \(other)}\n" } ?? "{\"other\": \(other)}\n"
    }

    /// Random heads (2 to 4) that each change the field or leave it; the current head is dated last.
    static func heads(_ random: inout SeededRandom, base: String, value: (inout SeededRandom) -> String) -> [(String, Bool)] {
        (0..<random.int(2...4)).map { _ in random.chance(70) ? (value(&random), true) : (base, false) }
    }

    /// `other` differs in every head, so that each is a version of its own; its rule keeps it out of the way.
    static let other = FieldRule("*.json", "/other", .max)

    static func fixture(base: String, heads: [(String, Bool)]) -> ConflictFixture {
        // Heads differ in `other` so that every head is its own version; the current one is dated last.
        let versions = heads.enumerated().map { index, head in
            FixtureVersion(document(head.0, other: index + 1), device: "d\(index)", date: minute(10 - index))
        }
        return ConflictFixture(
            key: "f.json", base: FixtureVersion(document(base), device: "base", date: minute(0)), current: versions[0],
            conflicts: Array(versions.dropFirst()))
    }

    @Test func counterIsTheBasePlusEveryHeadsChange() async throws {
        var random = SeededRandom(seed: 461)
        for index in 0..<60 {
            let base = random.int(-50...50)
            let heads = Self.heads(&random, base: String(base)) { String($0.int(-100...100)) }
            let expected = base + heads.map { Int($0.0)! - base }.reduce(0, +)
            let outcome = try await Self.merge(
                Self.fixture(base: String(base), heads: heads), rules: [FieldRule("*.json", "/v", .counter), Self.other])
            let merged = try Self.parsed(outcome.resolvedContent)
            #expect(merged["v"] as? Int == expected, "case \(index): base \(base), heads \(heads), merged \(merged)")
        }
    }

    @Test func unionIsAThreeWaySet() async throws {
        var random = SeededRandom(seed: 462)
        let pool = ["a", "b", "c", "d", "e", "f"]
        for index in 0..<60 {
            let base = Set(pool.filter { _ in random.chance(40) })
            let heads = (0..<random.int(2...4)).map { _ in Set(pool.filter { _ in random.chance(45) }) }
            // The model: what any head added stays; what a head removed, and no head added, goes.
            let added = heads.reduce(Set<String>()) { $0.union($1.subtracting(base)) }
            let removed = heads.reduce(Set<String>()) { $0.union(base.subtracting($1)) }
            let expected = base.subtracting(removed).union(added)
            func text(_ set: Set<String>) -> String { "[" + set.sorted().map { "\"\($0)\"" }.joined(separator: ", ") + "]" }
            let fixture = Self.fixture(base: text(base), heads: heads.map { (text($0), $0 != base) })
            let outcome = try await Self.merge(fixture, rules: [FieldRule("*.json", "/v", .union), Self.other])
            let merged = try Self.parsed(outcome.resolvedContent)
            let values = merged["v"] as? [String]
            #expect(values.map(Set.init) == expected, "case \(index): base \(base), heads \(heads), merged \(merged)")
            #expect(values.map { Set($0).count == $0.count } != false, "case \(index): an element twice")
        }
    }

    @Test func maxMinAndLatestWriterFollowTheirModels() async throws {
        var random = SeededRandom(seed: 463)
        for index in 0..<60 {
            let base = random.int(0...100)
            let heads = Self.heads(&random, base: String(base)) { String($0.int(0...100)) }
            let values = heads.map { Int($0.0)! }
            for (rule, expected) in [
                (FieldMerge.max, ([base] + values).max()!), (.min, ([base] + values).min()!),
                // The current-version rule among the heads that changed the field: head 0 is dated last.
                (.lww, heads.firstIndex { $0.1 }.map { values[$0] } ?? base),
            ] {
                let outcome = try await Self.merge(
                    Self.fixture(base: String(base), heads: heads), rules: [FieldRule("*.json", "/v", rule), Self.other])
                let merged = try Self.parsed(outcome.resolvedContent)
                #expect(merged["v"] as? Int == expected, "case \(index) \(rule.name): base \(base), heads \(heads), merged \(merged)")
            }
        }
    }

    /// The notes app of the rules article: title lww, tags union, body text, a counter, updatedAt max, checklist items
    /// by id with their own rule.
    static let notesRules = [
        FieldRule("notes/*.json", "/title", .lww), FieldRule("notes/*.json", "/tags", .union),
        FieldRule("notes/*.json", "/body", .text), FieldRule("notes/*.json", "/views", .counter),
        FieldRule("notes/*.json", "/updatedAt", .max), FieldRule("notes/*.json", "/items", .byID("id")),
        FieldRule("notes/*.json", "/items/*/done", .lww),
    ]

    static let noteBase = """
        {
          "title": "Shopping",
          "tags": ["home", "weekly"],
          "body": "milk\\neggs\\nbread\\n",
          "views": 10,
          "updatedAt": "2026-12-01T10:00:00Z",
          "items": [
            {"id": 1, "text": "milk", "done": false},
            {"id": 2, "text": "eggs", "done": false}
          ],
          "n": 2
        }

        """

    @Test func theNotesAppMergesByItsRulesAndKeepsEveryUntouchedByte() async throws {
        let phone = Self.noteBase.replacingOccurrences(of: "\"Shopping\"", with: "\"Groceries\"")
            .replacingOccurrences(of: "[\"home\", \"weekly\"]", with: "[\"home\", \"urgent\"]")
            .replacingOccurrences(of: "milk\\neggs", with: "oat milk\\neggs").replacingOccurrences(of: "\"views\": 10", with: "\"views\": 12")
            .replacingOccurrences(of: "2026-12-01T10:00:00Z", with: "2026-12-02T09:00:00Z")
            .replacingOccurrences(of: "\"text\": \"milk\", \"done\": false", with: "\"text\": \"milk\", \"done\": true")
        let laptop = Self.noteBase.replacingOccurrences(of: "\"Shopping\"", with: "\"Weekly shop\"")
            .replacingOccurrences(of: "[\"home\", \"weekly\"]", with: "[\"home\", \"weekly\", \"food\"]")
            .replacingOccurrences(of: "bread\\n", with: "rye bread\\n").replacingOccurrences(of: "\"views\": 10", with: "\"views\": 13")
            .replacingOccurrences(of: "2026-12-01T10:00:00Z", with: "2026-12-01T18:00:00Z")
            .replacingOccurrences(of: "\"text\": \"eggs\"", with: "\"text\": \"free-range eggs\"")
        let fixture = ConflictFixture(
            key: "notes/shopping.json", base: FixtureVersion(Self.noteBase, device: "base", date: Self.minute(0)),
            current: FixtureVersion(phone, device: "phone", date: Self.minute(5)),
            conflicts: [FixtureVersion(laptop, device: "laptop", date: Self.minute(3))])
        let outcome = try await Self.merge(fixture, rules: Self.notesRules)
        let expected = """
            {
              "title": "Groceries",
              "tags": ["home", "urgent", "food"],
              "body": "oat milk\\neggs\\nrye bread\\n",
              "views": 15,
              "updatedAt": "2026-12-02T09:00:00Z",
              "items": [
                {"id": 1, "text": "milk", "done": true},
                {"id": 2, "text": "free-range eggs", "done": false}
              ],
              "n": 2
            }

            """
        #expect(outcome.resolvedContent.map { String(decoding: $0, as: UTF8.self) } == expected, "\(outcome)")
    }

    @Test func textEditsThatOverlapAndPersonFieldsGoToAPerson() async throws {
        let base = "{\"body\": \"a\\nb\\nc\\n\", \"who\": \"x\", \"n\": 0}\n"
        let fixture = ConflictFixture(
            key: "d.json", base: FixtureVersion(base, device: "base", date: Self.minute(0)),
            current: FixtureVersion("{\"body\": \"a\\nB1\\nc\\n\", \"who\": \"y\", \"n\": 0}\n", device: "phone", date: Self.minute(5)),
            conflicts: [FixtureVersion("{\"body\": \"a\\nB2\\nc\\n\", \"who\": \"z\", \"n\": 1}\n", device: "laptop", date: Self.minute(3))])
        let outcome = try await Self.merge(fixture, rules: [FieldRule("*.json", "/body", .text), FieldRule("*.json", "/who", .person)])
        let points = try #require(outcome.conflictPoints)
        #expect(points.map(\.path) == ["/body", "/who"])
        #expect(points.map(\.reason) == ["text: both sides changed the same lines", "person: a person decides this field"])
        // The person's answers are taken as at any structured point; what the rules did not reach merged cleanly.
        let answered = try await StructuredMerge().applying(
            ["/body": .theirs, "/who": .ours], to: try fixture.conflictSet(),
            context: {
                var context = try fixture.context()
                context.fieldRules = [FieldRule("*.json", "/body", .text), FieldRule("*.json", "/who", .person)]
                return context
            }())
        #expect(answered.map { String(decoding: $0, as: UTF8.self) } == "{\"body\": \"a\\nB2\\nc\\n\", \"who\": \"y\", \"n\": 1}\n")
    }

    @Test func aRuleThatCannotApplyIsOneErrorNamingTheRuleAndTheValue() async throws {
        let fixture = ConflictFixture(
            key: "d.json", base: FixtureVersion("{\"views\": 1}\n", device: "base", date: Self.minute(0)),
            current: FixtureVersion("{\"views\": \"ten\"}\n", device: "phone", date: Self.minute(5)),
            conflicts: [FixtureVersion("{\"views\": 3}\n", device: "laptop", date: Self.minute(3))])
        let rules = try FieldRules(parsing: Data("*.json /views counter\n".utf8), name: ".truce/fields").rules
        await #expect(
            throws: TruceError.invalidConfiguration(
                "the rule 'counter' for /views (.truce/fields line 1) cannot apply at /views: \"ten\" is not a number")
        ) { try await Self.merge(fixture, rules: rules) }
    }

    @Test func aStoreResolvesByTheSyncedRulesAndWritesNothingWhenARuleCannotApply() async throws {
        let test = try TestStore()
        try test.setAttributes("*.json merge=structured\n")
        try test.store.setFieldRules(FieldRules(Self.notesRules))
        try test.makeConflict(
            "notes/a.json", base: .text("{\"views\": 1, \"title\": \"a\"}\n"),
            heads: [("phone", .text("{\"views\": 3, \"title\": \"a\"}\n")), ("laptop", .text("{\"views\": 5, \"title\": \"a\"}\n"))])
        guard case .resolved(let version, "structured", .settled) = try await test.store.resolve("notes/a.json", device: "x") else {
            Issue.record("not resolved")
            return
        }
        #expect(try test.store.contents(of: version) == .text("{\"views\": 7, \"title\": \"a\"}\n"))

        try test.makeConflict(
            "notes/b.json", base: .text("{\"views\": 1}\n"),
            heads: [("phone", .text("{\"views\": \"many\"}\n")), ("laptop", .text("{\"views\": 5}\n"))])
        let before = try test.store.versions(of: "notes/b.json").heads.map(\.id)
        await #expect(throws: TruceError.self) { try await test.store.resolve("notes/b.json", device: "x") }
        #expect(try test.store.versions(of: "notes/b.json").heads.map(\.id) == before)
    }
}

/// Invariants: a merge that breaks one is not written; the field goes to a person, whose answer is checked again.
@Suite(.timeLimit(.minutes(10))) struct FieldInvariantTests {
    static let invariants = """
        events/*.json /end    at-least=/start
        events/*.json /title  required
        events/*.json /title  type=string
        events/*.json /guests unique=id
        events/*.json /tags   max-count=2
        """

    static func fixture(_ base: String, _ phone: String, _ laptop: String) -> ConflictFixture {
        ConflictFixture(
            key: "events/a.json", base: FixtureVersion(base, device: "base", date: ConflictFixture.date(minute: 0)),
            current: FixtureVersion(phone, device: "phone", date: ConflictFixture.date(minute: 5)),
            conflicts: [FixtureVersion(laptop, device: "laptop", date: ConflictFixture.date(minute: 3))])
    }

    static func context(_ fixture: ConflictFixture) throws -> ResolutionContext {
        var context = try fixture.context()
        context.fieldInvariants = try FieldRules(parsing: Data(Self.invariants.utf8), name: ".truce/fields").invariants
        return context
    }

    @Test func theInvariantsParseAsOneModelWithTheRules() throws {
        let rules = try FieldRules(parsing: Data((Self.invariants + "\nevents/*.json /title lww\n").utf8), name: ".truce/fields")
        #expect(rules.invariants.map(\.check) == [.atLeast("/start"), .required, .type("string"), .unique("id"), .maxCount(2)])
        #expect(rules.rules.map(\.line) == ["events/*.json /title lww"])
        // Read back from its own text, and declared in Swift: the same lines.
        #expect(try FieldRules(parsing: Data(rules.text.utf8), name: "x").text == rules.text)
        let declared = FieldRules(
            [FieldRule("events/*.json", "/title", .lww)],
            invariants: [
                FieldInvariant("events/*.json", "/end", .atLeast("/start")), FieldInvariant("events/*.json", "/title", .required),
                FieldInvariant("events/*.json", "/title", .type("string")), FieldInvariant("events/*.json", "/guests", .unique("id")),
                FieldInvariant("events/*.json", "/tags", .maxCount(2)),
            ])
        #expect(declared.text == rules.text)
    }

    @Test func aMergeThatBreaksAnInvariantGoesToAPersonWhoseAnswerIsCheckedAgain() async throws {
        // Each side is sound; together the event ends before it starts.
        let fixture = Self.fixture(
            "{\"title\": \"Talk\", \"start\": 2, \"end\": 5}\n", "{\"title\": \"Talk\", \"start\": 4, \"end\": 5}\n",
            "{\"title\": \"Talk\", \"start\": 2, \"end\": 3}\n")
        let context = try Self.context(fixture)
        let outcome = try await StructuredMerge().resolve(try fixture.conflictSet(), context: context)
        let points = try #require(outcome.conflictPoints, "\(outcome)")
        #expect(points.map(\.path) == ["/end"])
        #expect(
            points.first?.reason
                == "invariant '/end at-least=/start' (.truce/fields line 1): the merge gives /end 3, below /start = 4")
        // An answer that breaks it again is refused; one that holds is taken.
        await #expect(throws: TruceError.self) {
            try await StructuredMerge().applying(["/end": .theirs], to: try fixture.conflictSet(), context: context)
        }
        let answered = try await StructuredMerge().applying(["/end": .ours], to: try fixture.conflictSet(), context: context)
        #expect(answered.map { String(decoding: $0, as: UTF8.self) } == "{\"title\": \"Talk\", \"start\": 4, \"end\": 5}\n")
    }

    @Test func eachCheckCatchesWhatItNames() async throws {
        let base = "{\"title\": \"T\", \"guests\": [{\"id\": 1}], \"tags\": [\"a\"], \"n\": 0}\n"
        for (phone, laptop, path) in [
            // Removed on one side while the other edited elsewhere: required.
            (
                "{\"guests\": [{\"id\": 1}], \"tags\": [\"a\"], \"n\": 0}\n",
                "{\"title\": \"T\", \"guests\": [{\"id\": 1}], \"tags\": [\"a\"], \"n\": 1}\n", "/title"
            ),
            // Each side adds a tag: three, where two at most are allowed.
            (
                "{\"title\": \"T\", \"guests\": [{\"id\": 1}], \"tags\": [\"a\", \"b\"], \"n\": 0}\n",
                "{\"title\": \"T\", \"guests\": [{\"id\": 1}], \"tags\": [\"a\", \"c\"], \"n\": 0}\n", "/tags"
            ),
            // Each side adds guest 2 with other details: merged as a sequence, two elements with id 2.
            (
                "{\"title\": \"T\", \"guests\": [{\"id\": 1}, {\"id\": 2, \"x\": 1}], \"tags\": [\"a\"], \"n\": 0}\n",
                "{\"title\": \"T\", \"guests\": [{\"id\": 1}, {\"name\": \"z\"}, {\"id\": 2, \"x\": 2}], \"tags\": [\"a\"], \"n\": 0}\n", "/guests"
            ),
        ] {
            let fixture = Self.fixture(base, phone, laptop)
            let outcome = try await StructuredMerge().resolve(try fixture.conflictSet(), context: try Self.context(fixture))
            #expect(outcome.conflictPoints?.map(\.path).contains(path) == true, "\(path): \(outcome)")
        }
    }

    @Test func aCheckWrittenInSwiftSendsTheWholeDocumentToAPerson() async throws {
        let fixture = Self.fixture(
            "{\"title\": \"Talk\", \"start\": 2, \"end\": 5}\n", "{\"title\": \"Talk!\", \"start\": 2, \"end\": 5}\n",
            "{\"title\": \"Talk\", \"start\": 2, \"end\": 6}\n")
        let shortTitles = DocumentCheck("events/*.json", name: "titles stay short") { merged in
            let title = (try? JSONSerialization.jsonObject(with: merged) as? [String: Any])?["title"] as? String
            return (title?.count ?? 0) > 4 ? "the title is longer than 4 characters" : nil
        }
        let outcome = try await StructuredMerge(checks: [shortTitles]).resolve(try fixture.conflictSet(), context: try fixture.context())
        let points = try #require(outcome.conflictPoints, "\(outcome)")
        #expect(points.map(\.path) == [""])
        #expect(points.first?.reason == "check 'titles stay short': the title is longer than 4 characters")
        // Other documents are not its business.
        let other = ConflictFixture(
            key: "notes/a.json", base: fixture.base, current: fixture.current, conflicts: fixture.conflicts)
        #expect(
            try await StructuredMerge(checks: [shortTitles]).resolve(try other.conflictSet(), context: try other.context()).resolvedContent != nil)
    }
}
