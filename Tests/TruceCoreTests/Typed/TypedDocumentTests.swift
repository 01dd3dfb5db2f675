import Foundation
import TestSupport
import Testing
import TruceTesting

@testable import TruceCore

/// A note as an app keeps it: typed, with its merge rules next to it.
struct TypedNote: TypedDocument, Equatable {
    enum Color: String, Codable, CaseIterable { case plain, red }
    struct Item: Codable, Equatable {
        var id: Int
        var text: String
        var done: Bool
    }

    var title: String
    var tags: [String]
    var body: String
    var views: Int
    var items: [Item]
    var color: Color
    var pinnedAt: Date?
    var extra: [String: String]

    static let fieldRules: [String: FieldMerge] = [
        "/title": .lww, "/tags": .union, "/body": .text, "/views": .counter, "/items": .byID("id"), "/items/*/done": .lww,
    ]
    static let fieldInvariants: [String: [FieldCheck]] = ["/items": [.unique("id")]]
}

/// A type whose rule names a member it does not have.
struct MisspeltNote: TypedDocument {
    var title: String
    static let fieldRules: [String: FieldMerge] = ["/titel": .lww]
}

/// A tree: a type that holds itself.
struct Outline: TypedDocument {
    var name: String
    var children: [Outline]
    var parent: [String: Outline]?
}

@Suite(.timeLimit(.minutes(10))) struct TypedDocumentTests {
    static let base = TypedNote(
        title: "Shopping", tags: ["home"], body: "milk\neggs\nbread\n", views: 1,
        items: [.init(id: 1, text: "milk", done: false), .init(id: 2, text: "eggs", done: false)], color: .plain, pinnedAt: nil,
        extra: [:])

    @Test func theFieldsATypeEncodesAreFoundWithoutAValue() throws {
        let fields = try EncodedFields.of(TypedNote.self)
        for path in [["title"], ["tags", "*"], ["items", "*", "done"], ["color"], ["pinnedAt"], ["extra", "*"]] {
            #expect(fields.contains(path), "\(path) in \(fields.sorted { $0.joined() < $1.joined() })")
        }
        #expect(!fields.contains(["titel"]))
        let outline = try EncodedFields.of(Outline.self)
        #expect(outline.contains(["children", "*", "name"]) && outline.contains(["parent", "*", "name"]))
    }

    @Test func aValueIsSavedAsSortedJSONAndReadBack() throws {
        let test = try TestStore()
        try test.store.save(Self.base, to: "notes/a.json", device: "phone")
        #expect(try test.store.read(TypedNote.self, from: "notes/a.json") == Self.base)
        let text = String(decoding: try #require(try test.store.contents(of: "notes/a.json")), as: UTF8.self)
        #expect(text.hasPrefix("{\n  \"body\" : \"milk\\neggs\\nbread\\n\",\n  \"color\" : \"plain\","), "\(text)")
        #expect(throws: TruceError.self) { try test.store.read(TypedNote.self, from: "notes/none.json") }
        try test.store.delete("notes/a.json")
        #expect(try test.store.read(TypedNote.self, from: "notes/a.json") == nil)
        try test.store.save(Data("{\"title\": 1}".utf8), to: "notes/bad.json")
        #expect(throws: TruceError.self) { try test.store.read(TypedNote.self, from: "notes/bad.json") }
    }

    @Test func aRuleNamingAMemberTheTypeDoesNotEncodeIsRefusedWhenDeclared() throws {
        let test = try TestStore()
        #expect(throws: TruceError.self) { try test.store.declareFieldRules(of: MisspeltNote.self, for: "notes/*.json") }
        do {
            try test.store.declareFieldRules(of: MisspeltNote.self, for: "notes/*.json")
        } catch {
            #expect("\(error.errorDescription ?? "")".contains("names /titel, which MisspeltNote does not encode; its fields are /title"))
        }
        #expect(try test.store.versions(of: ".truce/fields").current == nil, "nothing is written")
    }

    @Test func declaredRulesMergeTypedEditsFromTwoDevicesAndPointsNameTheMember() async throws {
        let test = try TestStore()
        try test.setAttributes("*.json merge=structured\n")
        try test.store.save(Data("# kept\nother/*.json /x lww\n".utf8), to: ".truce/fields")
        try #require(try test.store.declareFieldRules(of: TypedNote.self, for: "notes/*.json") != nil)
        #expect(try test.store.declareFieldRules(of: TypedNote.self, for: "notes/*.json") == nil, "the same rules again write nothing")
        let rules = String(decoding: try #require(try test.store.contents(of: ".truce/fields")), as: UTF8.self)
        #expect(rules.hasPrefix("# kept\nother/*.json /x lww\nnotes/*.json /body text\n"), "\(rules)")
        #expect(rules.contains("notes/*.json /items unique=id\n"))

        let base = try test.store.save(Self.base, to: "notes/a.json", device: "base", date: ConflictFixture.date(minute: 0)).version
        var phone = Self.base, laptop = Self.base
        phone.title = "Groceries"
        phone.tags.append("urgent")
        phone.views += 2
        phone.items[0].done = true
        laptop.tags.append("food")
        laptop.views += 3
        laptop.body = "milk\neggs\nrye bread\n"
        laptop.items.append(.init(id: 3, text: "tea", done: false))
        try test.store.save(phone, to: "notes/a.json", device: "phone", base: base.id, date: ConflictFixture.date(minute: 5))
        try test.store.save(laptop, to: "notes/a.json", device: "laptop", base: base.id, date: ConflictFixture.date(minute: 3))
        guard case .resolved = try await test.store.resolve("notes/a.json", device: "x") else {
            Issue.record("not resolved")
            return
        }
        let merged = try #require(try test.store.read(TypedNote.self, from: "notes/a.json"))
        #expect(merged.title == "Groceries" && Set(merged.tags) == ["home", "urgent", "food"] && merged.views == 6)
        #expect(merged.body == "milk\neggs\nrye bread\n")
        #expect(merged.items.map(\.id) == [1, 2, 3] && merged.items[0].done)

        // Overlapping edits of the body: a point at /body, the member's name.
        let again = try #require(try test.store.versions(of: "notes/a.json").current)
        var one = merged, two = merged
        one.body = "oat milk\neggs\nrye bread\n"
        two.body = "soy milk\neggs\nrye bread\n"
        try test.store.save(one, to: "notes/a.json", device: "phone", base: again.id)
        try test.store.save(two, to: "notes/a.json", device: "laptop", base: again.id)
        let points = try await test.store.conflictPoints(for: "notes/a.json")
        #expect(points.map(\.path) == ["/body"], "\(points)")
    }
}
