import Foundation
import TestSupport
import Testing
import Truce

/// Property lists, XML and binary, merged by structure with their types and format kept.
@Suite(.timeLimit(.minutes(10))) struct StructuredPropertyListTests {
    static let date = Date(timeIntervalSince1970: 1_700_000_000)

    static func plist(_ entries: [String: Any], _ format: PropertyListSerialization.PropertyListFormat) throws -> Data {
        try PropertyListSerialization.data(fromPropertyList: entries, format: format, options: 0)
    }

    static func base(_ changes: [String: Any] = [:]) -> [String: Any] {
        var entries: [String: Any] = [
            "name": "app", "count": 1, "ratio": 0.5, "when": date, "blob": Data([0, 1, 2]), "flag": true,
            "list": ["a", "b"], "title": "café ✓", "big": 70_000, "negative": -3,
            "long": String(repeating: "x", count: 40),
        ]
        for (key, value) in changes { entries[key] = value }
        return entries
    }

    @Test(arguments: [PropertyListSerialization.PropertyListFormat.xml, .binary])
    func mergesKeepingTypesAndFormat(_ format: PropertyListSerialization.PropertyListFormat) async throws {
        let test = try TestStore()
        try test.setAttributes("*.plist merge=structured\n")
        try test.makeConflict(
            "prefs.plist", base: try Self.plist(Self.base(), format),
            heads: [
                ("phone", try Self.plist(Self.base(["ratio": 0.75, "list": ["a", "b", "c"]]), format)),
                ("laptop", try Self.plist(Self.base(["count": 2, "when": Self.date.addingTimeInterval(60)]), format)),
            ])
        let result = try await test.store.resolve("prefs.plist", registry: .standard, device: "x")
        guard case .resolved(let version, "structured", _) = result else {
            Issue.record("\(result)")
            return
        }
        let content = try #require(try test.store.contents(of: version))
        #expect(content.starts(with: Data("bplist".utf8)) == (format == .binary), "the format changed")
        var read = PropertyListSerialization.PropertyListFormat.xml
        let merged = try #require(try PropertyListSerialization.propertyList(from: content, options: [], format: &read) as? [String: Any])
        #expect(read == format)
        let count = try #require(merged["count"] as? NSNumber), ratio = try #require(merged["ratio"] as? NSNumber)
        #expect(String(cString: count.objCType) != "d" && count.intValue == 2, "an integer stays an integer")
        #expect(String(cString: ratio.objCType) == "d" && ratio.doubleValue == 0.75, "a real stays a real")
        #expect(merged["when"] as? Date == Self.date.addingTimeInterval(60))
        #expect(merged["blob"] as? Data == Data([0, 1, 2]))
        #expect(type(of: merged["flag"]!) == Bool.self && merged["flag"] as? Bool == true)
        #expect(merged["list"] as? [String] == ["a", "b", "c"])
        #expect(merged["name"] as? String == "app")
        #expect(merged["title"] as? String == "café ✓" && merged["long"] as? String == String(repeating: "x", count: 40))
        #expect((merged["big"] as? NSNumber)?.intValue == 70_000 && (merged["negative"] as? NSNumber)?.intValue == -3)
    }

    @Test func aConflictIsReportedAtItsPathAndABrokenPropertyListPasses() async throws {
        let test = try TestStore()
        try test.setAttributes("*.plist merge=structured\n")
        try test.makeConflict(
            "p.plist", base: try Self.plist(Self.base(), .xml),
            heads: [
                ("phone", try Self.plist(Self.base(["count": 3]), .xml)), ("laptop", try Self.plist(Self.base(["count": 4]), .binary)),
            ])
        let result = try await test.store.resolve("p.plist", registry: .standard, device: "x")
        guard case .needsPerson(let points, "structured", _) = result else {
            Issue.record("\(result)")
            return
        }
        #expect(points.map(\.path) == ["/count"])
        #expect(points.first?.sides.map(\.text) == [.text("4\n"), .text("3\n")])

        let version = try #require(await test.store.resolve("p.plist", answering: ["/count": .theirs], registry: .standard, device: "me").version)
        let content = try #require(try test.store.contents(of: version))
        #expect(content.starts(with: Data("bplist".utf8)), "the current version's binary format is kept")
        let merged = try PropertyListSerialization.propertyList(from: content, options: [], format: nil) as? [String: Any]
        #expect((merged?["count"] as? NSNumber)?.intValue == 3)

        let broken = try TestStore()
        try broken.setAttributes("*.plist merge=structured\n")
        try broken.makeConflict(
            "b.plist", base: try Self.plist(Self.base(), .xml),
            heads: [
                ("phone", .text("<?xml version=\"1.0\"?><plist><dict><key>a</key>")), ("laptop", try Self.plist(Self.base(["count": 4]), .xml)),
            ])
        let before = snapshot(ofStore: broken.path)
        let passed = try await broken.store.resolve("b.plist", registry: .standard, device: "x")
        guard case .needsPerson(_, _, let reasons) = passed else {
            Issue.record("\(passed)")
            return
        }
        #expect(reasons.contains { $0.contains("is not a valid property list") }, "\(reasons)")
        #expect(snapshot(ofStore: broken.path) == before)
    }
}
