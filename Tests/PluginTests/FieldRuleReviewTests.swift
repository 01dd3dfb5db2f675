import Foundation
import TestSupport
import Testing
import Truce

/// What field rules record in the resolution commit, what `review` lists of it, and `restore` bringing one field back.
@Suite(.timeLimit(.minutes(10))) struct FieldRuleReviewTests {
    static let rules = [
        FieldRule("notes/*.json", "/title", .lww), FieldRule("notes/*.json", "/tags", .union),
        FieldRule("notes/*.json", "/views", .counter), FieldRule("notes/*.json", "/updatedAt", .max),
        FieldRule("notes/*.json", "/low", .min), FieldRule("notes/*.json", "/items", .byID("id")),
        FieldRule("notes/*.json", "/items/*/done", .lww),
    ]

    static func store() throws -> TestStore {
        let test = try TestStore()
        try test.setAttributes("*.json merge=structured\n")
        try test.store.setFieldRules(FieldRules(Self.rules))
        return test
    }

    static func note(title: String, tags: String, views: Int, updated: String, low: Int, done: [Bool]) -> Data {
        let items = done.enumerated().map { #"    {"id": \#($0.offset + 1), "done": \#($0.element)}"# }.joined(separator: ",\n")
        return Data(
            """
            {
              "title": "\(title)",
              "tags": \(tags),
              "views": \(views),
              "updatedAt": "\(updated)",
              "low": \(low),
              "items": [
            \(items)
              ]
            }

            """.utf8)
    }

    @Test func reviewListsWhatEachRuleDroppedAndThatCountersAndUnionsDroppedNothing() async throws {
        let test = try Self.store()
        let base = Self.note(title: "a", tags: #"["x"]"#, views: 1, updated: "2026-01", low: 5, done: [false, false])
        let made = try test.makeConflict(
            "notes/n.json", base: base,
            heads: [
                ("laptop", Self.note(title: "from laptop", tags: #"["x", "l"]"#, views: 3, updated: "2026-03", low: 4, done: [true, false])),
                ("phone", Self.note(title: "from phone", tags: #"["p"]"#, views: 2, updated: "2026-02", low: 6, done: [false, true])),
            ])
        let (laptop, phone) = (made.heads[0], made.heads[1])
        let resolution = try #require(try await test.store.resolve("notes/n.json", device: "desk").version)
        #expect(
            try test.store.contents(of: resolution)
                == Self.note(title: "from phone", tags: #"["p", "l"]"#, views: 4, updated: "2026-03", low: 4, done: [true, true]))

        let reviewed = try #require(try test.store.review("notes/n.json").resolutions.last)
        let lines = reviewed.decisions.map { decision in
            "\(decision.point ?? "") \(decision.kept.map { "kept \($0.deviceName)" } ?? "kept none") dropped "
                + decision.dropped.map { "\($0.deviceName)=\(String(decoding: $0.content ?? Data(), as: UTF8.self))" }.joined(separator: ",")
        }
        // items/0/done: only laptop changed it; items/1/done: only phone. Neither drops anything, and neither is listed.
        #expect(
            lines == [
                "/low kept laptop dropped phone=6",
                "/tags kept none dropped ",
                "/title kept phone dropped laptop=\"from laptop\"",
                "/updatedAt kept laptop dropped phone=\"2026-02\"",
                "/views kept none dropped ",
            ])
        let rules = Dictionary(uniqueKeysWithValues: reviewed.decisions.map { ($0.point ?? "", $0.rule) })
        #expect(rules["/views"] == "field rule counter (.truce/fields line 3): every head's change is counted; nothing dropped")
        #expect(rules["/tags"] == "field rule union (.truce/fields line 2): every head's additions and removals are kept; nothing dropped")
        #expect(rules["/title"] == "field rule lww (.truce/fields line 1): the latest change wins")
        // Each dropped value with its head's device and date.
        let dropped = reviewed.droppedValues
        #expect(dropped.map(\.value.version) == [phone.id, laptop.id, phone.id])
        #expect(dropped.map(\.value.modificationDate) == [phone.modificationDate, laptop.modificationDate, phone.modificationDate])
        // Plain git shows the decisions, a counter's among them, and reads the trailers after them.
        let message = try test.git("show", "-s", "--format=%B", resolution.id.hex)
        #expect(
            message.contains(
                "  at \"/tags\": field rule union (.truce/fields line 2): every head's additions and removals are kept; nothing dropped\n  at \"/title\""
            ))
        #expect(message.contains("    dropped \(laptop.id.hex) \(ISO8601.format(laptop.modificationDate)) \"laptop\" = \"from laptop\"\n"))
        let trailers = try git(["interpret-trailers", "--parse"], input: Data(message.utf8)).output
        #expect(trailers.hasPrefix("Document: notes/n.json\n"), "\(trailers)")
        #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)
    }

    /// Random values on three heads under lww, max and min: the values `review` lists as dropped are exactly those a
    /// small model of each rule replaces (every head that changed the field to something the merge does not hold).
    @Test func theDroppedValuesAreExactlyThoseEachRuleReplaces() async throws {
        var random = SeededRandom(seed: 0x4646)
        var drops = 0
        let fields = [("/a", "lww"), ("/b", "max"), ("/c", "min"), ("/d", "lww")]
        for round in 0..<8 {
            let test = try TestStore()
            try test.setAttributes("*.json merge=structured\n")
            try test.store.setFieldRules(
                FieldRules(fields.map { FieldRule("*.json", $0.0, FieldMerge(name: $0.1)!) }))
            let base = fields.map { _ in random.int(0...9) }
            let heads = (0..<3).map { _ in base.map { random.chance(50) ? random.int(0...9) : $0 } }
            func data(_ values: [Int]) -> Data {
                Data(("{" + zip(fields, values).map { "\"\($0.0.dropFirst())\": \($1)" }.joined(separator: ", ") + "}\n").utf8)
            }
            try test.makeConflict("r.json", base: data(base), heads: zip(["laptop", "phone", "tablet"], heads).map { ($0, data($1)) })
            guard try test.store.state(of: "r.json") == .inConflict else { continue }
            _ = try await test.store.resolve("r.json", device: "desk")
            var expected: [String] = []
            for (index, field) in fields.enumerated() {
                let changers = (0..<3).filter { heads[$0][index] != base[index] }
                let values = changers.map { heads[$0][index] }
                let merged: Int? =
                    switch field.1 {
                    case "max": (values + [base[index]]).max()
                    case "min": (values + [base[index]]).min()
                    default: changers.last.map { heads[$0][index] }  // later heads are later
                    }
                for loser in changers where heads[loser][index] != merged {
                    expected.append("\(field.0) \(["laptop", "phone", "tablet"][loser]) \(heads[loser][index])")
                }
            }
            let listed = try test.store.review("r.json").droppedValues.map {
                "\($0.point!) \($0.value.deviceName) \(String(decoding: $0.value.content ?? Data(), as: UTF8.self))"
            }
            #expect(listed.sorted() == expected.sorted(), "round \(round)")
            drops += expected.count
        }
        #expect(drops >= 8, "the rounds dropped values: \(drops)")
    }

    /// A field of an element matched by id, restored after the element moved: the value comes back to the element
    /// with that id, and every other byte of the current version stays.
    @Test func restoreBringsOneFieldBackToTheElementWithItsId() async throws {
        let test = try Self.store()
        let base = Self.note(title: "a", tags: "[]", views: 1, updated: "1", low: 1, done: [false, false])
        try test.makeConflict(
            "notes/n.json", base: base,
            heads: [
                ("laptop", Self.note(title: "a", tags: "[]", views: 1, updated: "1", low: 1, done: [false, true])),
                ("phone", Self.note(title: "a", tags: "[]", views: 1, updated: "1", low: 1, done: [false, false]).replacing("false}\n", "null}\n")),
            ])
        try await test.store.resolve("notes/n.json", device: "desk")
        let dropped = try #require(try test.store.review("notes/n.json").droppedValues.first)
        #expect(dropped.point == "/items/1/done")
        #expect(dropped.value.deviceName == "laptop" && dropped.value.content == Data("true".utf8))
        // Edited since: an element put in front moves element 2 to index 2, and the title changed.
        let edited = """
            {
              "title": "edited",
              "tags": [],
              "views": 1,
              "updatedAt": "1",
              "low": 1,
              "items": [
                {"id": 9, "done": false},
                {"id": 1, "done": false},
                {"id": 2, "done": null}
              ]
            }

            """
        try test.store.save(Data(edited.utf8), to: "notes/n.json", device: "phone")
        let restored = try #require(try await test.store.restore(dropped, device: "laptop"))
        #expect(try test.store.contents(of: "notes/n.json") == Data(edited.replacing(#"{"id": 2, "done": null}"#, #"{"id": 2, "done": true}"#).utf8))
        #expect(try test.store.review("notes/n.json").droppedValues.first?.restoredBy == restored.id)
    }

    @Test func aDroppedValueOfACRLFDocumentIsRecordedWithoutTheLineBreak() async throws {
        let test = try TestStore()
        try test.setAttributes("*.json merge=structured\n")
        try test.store.setFieldRules(FieldRules([FieldRule("*.json", "/theme", .lww)]))
        try test.makeConflict(
            "s.json", base: .text("{\r\n  \"theme\": \"light\"\r\n}\r\n"),
            heads: [("laptop", .text("{\r\n  \"theme\": \"dark\"\r\n}\r\n")), ("phone", .text("{\r\n  \"theme\": \"blue\"\r\n}\r\n"))])
        try await test.store.resolve("s.json", device: "desk")
        let dropped = try #require(try test.store.review("s.json").droppedValues.first)
        #expect(dropped.value.content == .text(#""dark""#) && dropped.kept?.content == .text(#""blue""#))
    }

    @Test func restoringAFieldTheDroppedHeadRemovedRemovesIt() async throws {
        let test = try TestStore()
        try test.setAttributes("*.json merge=structured\n")
        try test.store.setFieldRules(FieldRules([FieldRule("*.json", "/theme", .lww)]))
        try test.makeConflict(
            "s.json", base: .text("{\"theme\": \"light\", \"size\": 1}\n"),
            heads: [("laptop", .text("{\"size\": 1}\n")), ("phone", .text("{\"theme\": \"dark\", \"size\": 1}\n"))])
        try await test.store.resolve("s.json", device: "desk")
        let dropped = try #require(try test.store.review("s.json").droppedValues.first)
        #expect(dropped.value.content == nil)
        try await test.store.restore(dropped, device: "laptop")
        #expect(try test.store.contents(of: "s.json") == .text("{\"size\": 1}\n"))
    }
}

extension Data {
    fileprivate func replacing(_ old: String, _ new: String) -> Data {
        Data(String(decoding: self, as: UTF8.self).replacing(old, with: new).utf8)
    }
}

extension String {
    fileprivate func replacing(_ old: String, _ new: String) -> String { replacing(old, with: new) }
}
