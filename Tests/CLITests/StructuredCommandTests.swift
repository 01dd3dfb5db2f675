import Foundation
import TestSupport
import Testing

/// `conflicts`, `resolve --take PATH=…` and `explain` on a JSON document that `merge=structured` settles.
@Suite(.timeLimit(.minutes(10))) struct StructuredCommandTests {
    static let base = "{\n  \"editor\": {\n    \"theme\": \"light\",\n    \"size\": 12\n  },\n  \"tags\": [\"a\", \"b\"]\n}\n"
    /// Changes the theme and the size.
    static let laptop = "{\n  \"editor\": {\n    \"theme\": \"dark\",\n    \"size\": 14\n  },\n  \"tags\": [\"a\", \"b\"]\n}\n"
    /// Changes the theme differently and adds a tag; saved last, so current.
    static let phone = "{\n  \"editor\": {\n    \"theme\": \"solarized\",\n    \"size\": 12\n  },\n  \"tags\": [\"a\", \"b\", \"c\"]\n}\n"

    static func conflicted() throws -> (CLIStore, SavedConflict) {
        let store = try CLIStore()
        try store.writeAttributes("*.json merge=structured\n")
        let saved = try store.saveConflict("settings.json", base: .text(base), heads: [("laptop", .text(laptop)), ("phone", .text(phone))])
        return (store, saved)
    }

    @Test func aConflictWritesNothingExitsOneAndListsThePathWithEveryValue() throws {
        let (store, saved) = try Self.conflicted()
        let before = snapshot(ofStore: store.path)
        let resolve = try store.run("resolve", "settings.json")
        #expect(resolve.status == 1, "\(resolve.errorOutput)")
        #expect(resolve.output.contains("H1  path /editor/theme: changed differently on both sides"), "\(resolve.output)")
        #expect(snapshot(ofStore: store.path) == before)

        let json = try store.json("conflicts", "settings.json")
        let points = try #require(json["points"] as? [[String: Any]])
        #expect(points.count == 1)
        let point = try #require(points.first)
        #expect(point["path"] as? String == "/editor/theme")
        #expect(point["base"] as? String == "\"light\"\n")
        let sides = try #require(point["sides"] as? [[String: Any]])
        #expect(sides.map { $0["version"] as? String } == [saved.heads[1], saved.heads[0]])
        #expect(sides.map { $0["text"] as? String } == ["\"solarized\"\n", "\"dark\"\n"])
        #expect(snapshot(ofStore: store.path) == before)
    }

    @Test func takeAnswersPerPathAndKeepsWhatMergedCleanly() throws {
        let (store, saved) = try Self.conflicted()
        let result = try store.run("resolve", "settings.json", "--take", "/editor/theme=theirs")
        #expect(result.status == 0, "\(result.errorOutput)")
        let merged = try store.run("cat", "settings.json")
        #expect(merged.output == Self.phone.replacingOccurrences(of: "solarized", with: "dark").replacingOccurrences(of: "12", with: "14"))
        let parents = try store.gitInStore("log", "-1", "--format=%P", "--all", "--grep=Resolved-By")
        #expect(Set(parents.output.split(whereSeparator: \.isWhitespace).map(String.init)) == Set(saved.heads), "\(parents.output)")
        #expect(try store.gitInStore("fsck", "--strict").status == 0)
    }

    @Test func takeFileHoldsAJSONValueAndBadAnswersChangeNothing() throws {
        let (store, _) = try Self.conflicted()
        let before = snapshot(ofStore: store.path)
        let value = store.directory.write(.text("{\"custom\": true}"), to: "theme.json")
        let notJSON = store.directory.write(.text("{custom"), to: "bad.json")
        for take in ["/editor/size=ours", "/editor/theme=both", "/editor/theme=file:\(notJSON)"] {
            let result = try store.run("resolve", "settings.json", "--take", take)
            #expect(result.status == 2, "\(take): \(result.status) \(result.errorOutput)")
            #expect(result.errorLines.count == 1 && result.errorLines[0].hasPrefix("truce: "), "\(result.errorLines)")
            #expect(snapshot(ofStore: store.path) == before, "\(take) changed the store")
        }
        let result = try store.run("resolve", "settings.json", "--take", "/editor/theme=file:\(value)")
        #expect(result.status == 0, "\(result.errorOutput)")
        #expect(try store.run("cat", "settings.json").output.contains("\"theme\": {\"custom\": true},"))
    }

    @Test(arguments: [PropertyListSerialization.PropertyListFormat.binary, .xml])
    func replicasResolvingTheSameConflictWriteTheSameBytes(_ format: PropertyListSerialization.PropertyListFormat) throws {
        func plist(_ changes: [String: Int]) throws -> Data {
            var entries = Dictionary(uniqueKeysWithValues: (0..<30).map { ("key\($0)", $0) })
            for (key, value) in changes { entries[key] = value }
            return try PropertyListSerialization.data(fromPropertyList: entries, format: format, options: 0)
        }
        var results: [Data] = []
        // Each resolution runs in its own process, with its own hash seed: the bytes must not depend on it.
        for _ in 0..<2 {
            let store = try CLIStore()
            try store.writeAttributes("*.plist merge=structured\n")
            try store.saveConflict("p.plist", base: try plist([:]), heads: [("laptop", try plist(["key3": 99])), ("phone", try plist(["new": 1]))])
            let resolve = try store.run("resolve", "p.plist")
            #expect(resolve.status == 0, "\(resolve.errorOutput)")
            results.append(try store.run("cat", "p.plist").stdout)
        }
        #expect(results[0] == results[1])
        #expect(results[0].starts(with: Data("bplist".utf8)) == (format == .binary))
    }

    @Test func explainShowsTheArrayRulesAndWhyStructuredPassed() throws {
        let (store, _) = try Self.conflicted()
        _ = try store.gitInStore("config", "resolver.structured.identityPaths", "/editor/plugins=name")
        let explain = try store.run("explain", "settings.json")
        #expect(explain.status == 0, "\(explain.errorOutput)")
        #expect(explain.output.contains("structured: array at /editor/plugins is matched by name"), "\(explain.output)")
        #expect(explain.output.contains("outcome: structured needs a person for 1 conflict points"), "\(explain.output)")

        let broken = try CLIStore()
        try broken.writeAttributes("*.json merge=structured\n")
        _ = try broken.gitInStore("config", "resolver.structured.fallback", "list-conflicts")
        try broken.saveConflict("b.json", base: .text("{}"), heads: [("laptop", .text("{\"a\": 1,}")), ("phone", .text("{\"a\": 3}"))])
        let why = try broken.run("explain", "b.json")
        #expect(why.output.contains("passed: structured: version "), "\(why.output)")
        #expect(why.output.contains("is not valid JSON: expected a member name in quotes"), "\(why.output)")
    }

    /// `explain` names the rule behind each point, and shows the options of a name that `uses` structured.
    @Test func explainNamesTheRuleThatSentEachPointToAPerson() throws {
        let store = try CLIStore()
        try store.writeAttributes("*.json merge=structured\nlocales/*.json merge=careful-json\n")
        _ = try store.gitInStore("config", "resolver.careful-json.uses", "structured")
        _ = try store.gitInStore("config", "resolver.careful-json.siblings", "ask")
        try store.saveConflict(
            "moved.json", base: .text("{\"a\": {\"host\": 1}, \"x\": 1}\n"),
            heads: [("laptop", .text("{\"b\": {\"host\": 1}, \"x\": 1}\n")), ("phone", .text("{\"c\": {\"host\": 1}, \"x\": 1}\n"))])
        let moved = try store.run("explain", "moved.json")
        // One point at each new place (in the current version's order), each naming the other.
        #expect(moved.output.contains(" at /b: moved here from /a on one side, and to /c on the other"), "\(moved.output)")
        #expect(moved.output.contains(" at /c: moved here from /a on one side, and to /b on the other"), "\(moved.output)")

        try store.saveConflict(
            "locales/en.json", base: .text("{\"hi\": \"Hello\", \"bye\": \"Bye\"}\n"),
            heads: [("laptop", .text("{\"hi\": \"Hi\", \"bye\": \"Bye\"}\n")), ("phone", .text("{\"hi\": \"Hello\", \"bye\": \"Ciao\"}\n"))])
        let careful = try store.run("explain", "locales/en.json")
        #expect(careful.output.contains("resolver: careful-json (from info/attributes line 2"), "\(careful.output)")
        #expect(careful.output.contains("option: resolver.careful-json.uses = structured"), "\(careful.output)")
        #expect(careful.output.contains("careful-json: an object whose members both sides changed goes to a person whole (siblings = ask)"))
        #expect(careful.output.contains("point: H1 at (the whole document): both sides changed members of this object, and siblings = ask"))
        let json = try store.run("explain", "locales/en.json", "--json")
        #expect(json.output.contains("\"careful-json\""), "\(json.output)")
    }
}

/// `truce fields`: a rules document checked line by line before it is saved, and the rules a document is under.
@Suite(.timeLimit(.minutes(10))) struct FieldsCommandTests {
    @Test func checkReportsEveryProblemWithItsLineAndExitsTwo() throws {
        let store = try CLIStore()
        let file = store.directory.file("rules")
        try Data("notes/*.json /title lww\nnotes/*.json /tags\n*.json /v tally\n".utf8).write(to: URL(fileURLWithPath: file))
        let checked = try store.run("fields", "--check", file)
        #expect(checked.status == 2)
        #expect(checked.output.split(separator: "\n").count == 2, "\(checked.output)")
        #expect(checked.output.contains("\(file) line 2: expected DOCUMENTS FIELD RULE, three words, found 2"))
        #expect(checked.output.contains("\(file) line 3: unknown rule or check 'tally'"))
        let sound = try store.run("fields", "--check", "-", input: Data("notes/*.json /title lww\n".utf8))
        #expect(sound.status == 0 && sound.output == "standard input: 1 rules, no problems\n", "\(sound.output)")
    }

    @Test func fieldsAndExplainShowTheRulesADocumentIsUnderWithTheirLines() throws {
        let store = try CLIStore()
        try store.writeAttributes("*.json merge=structured\n")
        try Data("notes/*.json /title max\n".utf8).write(to: URL(fileURLWithPath: store.path + "/info/fields"))
        _ = try store.saveBytes(".truce/fields", .text("notes/*.json /title lww\nnotes/*.json /tags union\n"))
        let fields = try store.run("fields", "notes/a.json")
        #expect(
            fields.output
                == "/title max (info/fields line 1: notes/*.json /title max)\n/title lww (.truce/fields line 1: notes/*.json /title lww)\n"
                + "/tags union (.truce/fields line 2: notes/*.json /tags union)\n", "\(fields.output) \(fields.errorOutput)")
        _ = try store.saveConflict(
            "notes/a.json", base: .text("{\"title\": \"a\", \"tags\": []}\n"),
            heads: [("laptop", .text("{\"title\": \"b\", \"tags\": [\"x\"]}\n")), ("phone", .text("{\"title\": \"c\", \"tags\": [\"y\"]}\n"))])
        let explain = try store.run("explain", "notes/a.json")
        #expect(explain.output.contains("field rule: /title lww (.truce/fields line 1)"), "\(explain.output)")
        #expect(explain.output.contains("outcome: structured would resolve it"), "\(explain.output)")
    }
    @Test func reviewListsWhatTheFieldRulesDroppedAndRestoreBringsOneFieldBack() throws {
        let store = try CLIStore()
        try store.writeAttributes("*.json merge=structured\n")
        _ = try store.saveBytes(".truce/fields", .text("notes/*.json /title lww\nnotes/*.json /views counter\n"))
        let conflict = try store.saveConflict(
            "notes/a.json", base: .text("{\"title\": \"a\", \"views\": 1}\n"),
            heads: [("laptop", .text("{\"title\": \"b\", \"views\": 2}\n")), ("phone", .text("{\"title\": \"c\", \"views\": 3}\n"))])
        #expect(try store.run("resolve", "notes/a.json", "--device", "desk").status == 0)
        let laptop = String(conflict.heads[0].prefix(7))
        let lines = try store.run("review", "notes/a.json").output.split(separator: "\n").map(String.init)
        #expect(
            Array(lines.dropFirst().prefix(4)) == [
                "  at \"/title\": field rule lww (.truce/fields line 1): the latest change wins",
                "    kept     phone  2026-11-30T11:00:00Z  \(conflict.heads[1].prefix(7))  = \"c\"",
                "    dropped  laptop  2026-11-30T10:00:00Z  \(laptop)  = \"b\"  restore: --restore /title@\(laptop)",
                "  at \"/views\": field rule counter (.truce/fields line 2): every head's change is counted; nothing dropped",
            ], "\(lines)")
        let restored = try store.run("review", "notes/a.json", "--restore", "/title", "--device", "me")
        #expect(restored.status == 0, "\(restored.errorOutput)")
        #expect(try store.run("cat", "notes/a.json").output == "{\"title\": \"b\", \"views\": 4}\n")
        // A counter dropped nothing: there is nothing to bring back.
        let nothing = try store.run("review", "notes/a.json", "--restore", "/views")
        #expect(nothing.status != 0 && nothing.errorLines.count == 1, "\(nothing.errorOutput)")
    }
}
