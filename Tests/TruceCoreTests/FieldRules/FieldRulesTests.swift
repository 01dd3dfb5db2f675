import Foundation
import TestSupport
import Testing

@testable import TruceCore

/// The rules document: one rule a line, every problem reported with its line, and the same model as rules declared
/// in Swift.
@Suite(.timeLimit(.minutes(10))) struct FieldRulesTests {
    static let document = """
        # notes: title by the latest edit, tags as a set
        notes/*.json  /title          lww
        notes/*.json  /tags           union
        notes/*.json\t/items          id=id
        notes/*.json  /items/*/done   lww

        *.json        /views          counter
        """

    @Test func aDocumentAndTheSameRulesDeclaredInSwiftAreOneModel() throws {
        let parsed = try FieldRules(parsing: Data(Self.document.utf8), name: ".truce/fields")
        let declared = FieldRules([
            FieldRule("notes/*.json", "/title", .lww), FieldRule("notes/*.json", "/tags", .union),
            FieldRule("notes/*.json", "/items", .byID("id")), FieldRule("notes/*.json", "/items/*/done", .lww),
            FieldRule("*.json", "/views", .counter),
        ])
        #expect(parsed.rules.map(\.line) == declared.rules.map(\.line))
        #expect(parsed.rules[1].source == ".truce/fields line 3")
        #expect(try FieldRules(parsing: Data(declared.text.utf8), name: "x").rules.map(\.line) == declared.rules.map(\.line))
    }

    @Test func aDocumentsRulesAreTheOnesItsPatternMatchesAndTheLastThatNamesAFieldDecides() throws {
        let rules = try FieldRules(parsing: Data((Self.document + "\nnotes/*.json /title max\n").utf8), name: ".truce/fields")
        #expect(rules.rules(for: "notes/a.json").count == 6)
        #expect(rules.rules(for: "other.json").map(\.field) == ["/views"])
        #expect(rules.rules(for: "notes/a.txt").isEmpty)
        let title = rules.rules(for: "notes/a.json").last { $0.matches(fieldSteps: ["title"]) }
        #expect(title?.merge == .max)
        #expect(FieldRule("*", "/items/*/done", .lww).matches(fieldSteps: ["items", "3", "done"]))
        #expect(!FieldRule("*", "/items/*/done", .lww).matches(fieldSteps: ["items", "done"]))
        #expect(FieldRule("*", "/a~1b/c~0d", .lww).fieldSteps == ["a/b", "c~d"])
    }

    @Test func everyMalformedLineIsReportedWithItsNumberAndNothingIsRead() throws {
        let broken = """
            notes/*.json /title lww
            notes/*.json /title
            notes/*.json title lww
            notes/*.json /views tally
            !notes/*.json /views counter
            """
        let problems = FieldRules.check(Data(broken.utf8), name: ".truce/fields")
        #expect(problems.count == 4, "\(problems)")
        #expect(problems[0].hasPrefix(".truce/fields line 2: expected DOCUMENTS FIELD RULE, three words, found 2"))
        #expect(problems[1].hasPrefix(".truce/fields line 3: the field 'title' is not a JSON Pointer"))
        #expect(problems[2].hasPrefix(".truce/fields line 4: unknown rule or check 'tally'; rules are lww, max, min"))
        #expect(problems[3].hasPrefix(".truce/fields line 5: the documents pattern '!notes/*.json'"))
        #expect(throws: TruceError.self) { try FieldRules(parsing: Data(broken.utf8), name: ".truce/fields") }
    }

    @Test func aStoreKeepsItsRulesInTheSyncedDocumentAndReadsThemForEachKey() throws {
        let test = try TestStore()
        let rules = FieldRules([FieldRule("notes/*.json", "/title", .lww), FieldRule("*.json", "/views", .counter)])
        let written = try #require(try test.store.setFieldRules(rules, device: "phone"))
        #expect(written.key == ".truce/fields")
        #expect(try test.store.setFieldRules(rules) == nil, "the same rules again write nothing")
        #expect(try test.store.contents(of: ".truce/fields") == Data(rules.text.utf8))
        // The local info/fields is read first; the synced document decides where both name a field.
        try Data("*.json /views max\nlocal/*.json /a min\n".utf8).write(to: URL(fileURLWithPath: test.path + "/info/fields"))
        let choice = try test.store.resolverChoice(for: "notes/n.json")
        #expect(choice.fieldRules.map(\.line) == ["*.json /views max", "notes/*.json /title lww", "*.json /views counter"])
        #expect(
            try test.store.resolverChoice(for: "local/x.json").fieldRules.map(\.line) == [
                "*.json /views max", "local/*.json /a min", "*.json /views counter",
            ])
        // git reads the synced document as any file.
        let shown = try git(["--git-dir", test.path, "show", "\(written.id.hex):.truce/fields"])
        #expect(shown.output == rules.text)
    }
}
