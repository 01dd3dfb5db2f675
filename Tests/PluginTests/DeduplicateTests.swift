import Foundation
import TestSupport
import Testing
import Truce

@Suite(.timeLimit(.minutes(10))) struct DeduplicateTests {
    /// A store where `*.json`, `*.jsonl` and `*.ndjson` deduplicate on `uuid`, keeping `keep` when given.
    func store(keep: String? = nil) throws -> TestStore {
        let test = try TestStore()
        try test.setAttributes("*.json merge=deduplicate\n*.jsonl merge=deduplicate\n*.ndjson merge=deduplicate\n")
        try test.setConfig("resolver.deduplicate.key", "uuid")
        if let keep { try test.setConfig("resolver.deduplicate.keep", keep) }
        return test
    }

    func resolvedText(_ test: TestStore, _ key: DocumentKey) async throws -> String? {
        let result = try await test.store.resolve(key, registry: .standard, device: "x")
        guard case .resolved(let version, "deduplicate", .settled) = result else {
            Issue.record("\(result)")
            return nil
        }
        #expect(version.parents.count == 2)
        return try test.store.contents(of: version).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func theUnionOfEveryHeadKeepsTheLatestRecordPerKeyInFirstAppearanceOrder() async throws {
        let test = try store(keep: "latest:syncedTimestamp")
        let base = #"[{"uuid":"b","name":"Bread","syncedTimestamp":1}]"#
        // laptop adds c and renames b (later timestamp); phone (current) adds a and d.
        let laptop = #"[{"uuid":"b","name":"Brot","syncedTimestamp":5},{"uuid":"c","name":"Cheese","syncedTimestamp":2}]"#
        let phone =
            #"[{"uuid":"d","name":"Dates","syncedTimestamp":3},{"uuid":"b","name":"Bread","syncedTimestamp":1},{"uuid":"a","syncedTimestamp":4}]"#
        try test.makeConflict("list.json", base: .text(base), heads: [("laptop", .text(laptop)), ("phone", .text(phone))])
        await #expect(
            try resolvedText(test, "list.json")
                == #"[{"name":"Dates","syncedTimestamp":3,"uuid":"d"},{"name":"Brot","syncedTimestamp":5,"uuid":"b"},{"syncedTimestamp":4,"uuid":"a"},{"name":"Cheese","syncedTimestamp":2,"uuid":"c"}]"#
        )
    }

    @Test func latestComparesISODatesAsTextAndATieFallsToTheSmallestRecord() async throws {
        let test = try store(keep: "latest:modified")
        let laptop = """
            [
              {"uuid": 7, "modified": "2026-11-30T10:00:00Z", "v": "laptop"},
              {"uuid": 8, "modified": "2026-11-30T09:00:00Z", "v": "b"}
            ]

            """
        let phone = """
            [
              {"uuid": 7, "modified": "2026-11-30T09:59:59Z", "v": "phone"},
              {"uuid": 8, "modified": "2026-11-30T09:00:00Z", "v": "a"}
            ]

            """
        try test.makeConflict("r.json", base: .text("[]\n"), heads: [("laptop", .text(laptop)), ("phone", .text(phone))])
        // Indented, with a final newline, because the current version was.
        await #expect(
            try resolvedText(test, "r.json") == """
                [
                  {
                    "modified" : "2026-11-30T10:00:00Z",
                    "uuid" : 7,
                    "v" : "laptop"
                  },
                  {
                    "modified" : "2026-11-30T09:00:00Z",
                    "uuid" : 8,
                    "v" : "a"
                  }
                ]

                """)
    }

    @Test func smallestKeyIsTheDefaultAndPicksTheSmallestCanonicalRecord() async throws {
        let test = try store()
        try test.makeConflict(
            "r.json", base: .text("[]"),
            heads: [
                ("laptop", .text(#"[{"uuid":"x","n":2},{"uuid":"y","tag":"only laptop"}]"#)),
                ("phone", .text(#"[{"n":10,"uuid":"x"}]"#)),
            ])
        await #expect(try resolvedText(test, "r.json") == #"[{"n":10,"uuid":"x"},{"tag":"only laptop","uuid":"y"}]"#)
    }

    @Test func smallestOfAFieldDeduplicatesTagsByNameAsTheCloudKitSampleDoes() async throws {
        let test = try store(keep: "smallest:uuid")
        try test.setConfig("resolver.deduplicate.key", "name")
        try test.makeConflict(
            "tags.json", base: .text("[]"),
            heads: [
                ("laptop", .text(#"[{"name":"Home","uuid":"B-2"},{"name":"Work","uuid":"W"}]"#)),
                ("phone", .text(#"[{"name":"Home","uuid":"A-1"},{"name":"Home","uuid":"C-3"}]"#)),
            ])
        await #expect(try resolvedText(test, "tags.json") == #"[{"name":"Home","uuid":"A-1"},{"name":"Work","uuid":"W"}]"#)
    }

    @Test(arguments: ["events.jsonl", "events.ndjson"])
    func jsonLinesAreOneCompactRecordPerLine(key: String) async throws {
        let test = try store(keep: "latest:rev")
        try test.makeConflict(
            DocumentKey(key), base: .text("{\"uuid\":1,\"rev\":1}\n"),
            heads: [
                ("laptop", .text("{\"uuid\":1,\"rev\":2}\n{\"uuid\":2,\"rev\":1}\n")),
                ("phone", .text("{\"uuid\": 3, \"rev\": 1}\n\n{\"uuid\":1,\"rev\":1}\n{\"rev\": 9}\n{\"rev\": 9}\n")),
            ])
        // A record without the key (`{"rev": 9}`) collapses only with an identical one.
        await #expect(
            try resolvedText(test, DocumentKey(key)) == "{\"rev\":1,\"uuid\":3}\n{\"rev\":2,\"uuid\":1}\n{\"rev\":9}\n{\"rev\":1,\"uuid\":2}\n")
    }

    @Test(arguments: [
        ("r.json", "[{\"uuid\": 1}", "is not valid JSON"),
        ("r.json", "{\"uuid\": 1}", "is not a collection of records: it is not a JSON array"),
        ("r.json", "[{\"uuid\": 1}, 2]", "is not a collection of records: element 2 is not a JSON object"),
        ("r.jsonl", "{\"uuid\": 1}\n{oops\n", "is not valid JSON Lines: line 2 does not parse"),
        ("r.jsonl", "{\"uuid\": 1}\n[1]\n", "is not a collection of records: line 2 is not a JSON object"),
    ])
    func malformedHeadsAreClearErrorsNamingTheVersion(key: String, bad: String, message: String) async throws {
        let test = try store()
        let document = try DocumentKey(key)
        let made = try test.makeConflict(
            document, base: .text(""), heads: [("laptop", .text(bad)), ("phone", .text(key.hasSuffix("l") ? "" : "[]"))])
        let before = snapshot(ofStore: test.path)
        await #expect(throws: TruceError.malformedContent(document, version: made.heads[0].id, reason: message)) {
            try await test.store.resolve(document, registry: .standard, device: "x")
        }
        #expect(snapshot(ofStore: test.path) == before)
    }

    @Test(
        arguments: [
            (nil, "newest", "resolver.deduplicate.keep = newest: expected smallest-key, latest:<field> or smallest:<field>"),
            (nil, "latest:", "resolver.deduplicate.keep = latest:: expected smallest-key, latest:<field> or smallest:<field>"),
            ("", nil, "resolver.deduplicate.key is missing: name the field that identifies a record (for example uuid)"),
        ] as [(String?, String?, String)])
    func aMissingKeyOrAnUnknownRuleIsAConfigError(key: String?, keep: String?, message: String) async throws {
        let test = try TestStore()
        try test.setAttributes("*.json merge=deduplicate\n")
        if let key { try test.setConfig("resolver.deduplicate.key", key) }
        if let keep {
            try test.setConfig("resolver.deduplicate.key", "uuid")
            try test.setConfig("resolver.deduplicate.keep", keep)
        }
        try test.makeConflict("r.json", base: .text("[]"), heads: [("laptop", .text("[{\"uuid\":1}]")), ("phone", .text("[{\"uuid\":2}]"))])
        let before = snapshot(ofStore: test.path)
        #expect(throws: TruceError.invalidConfiguration(message)) { try test.store.resolverChoice(for: "r.json", registry: .standard) }
        await #expect(throws: TruceError.invalidConfiguration(message)) { try await test.store.resolve("r.json", registry: .standard, device: "x") }
        #expect(snapshot(ofStore: test.path) == before)
    }
}
