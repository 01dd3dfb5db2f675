import Foundation
import TestSupport
import Testing
import Truce

@Suite(.timeLimit(.minutes(10))) struct LastWriterWinsTests {
    static let start = Date(timeIntervalSince1970: 1_796_000_000)

    /// Saves `base`, then each `(device, content, minutes after base)` from it: a conflict with dates the test chooses.
    @discardableResult
    func conflict(_ test: TestStore, _ key: DocumentKey, base: Data, heads: [(String, Data, Double)]) throws -> [Version] {
        let baseVersion = try test.store.save(base, to: key, device: "origin", date: Self.start)
        return try heads.map { device, content, minutes in
            try test.store.save(content, to: key, device: device, base: baseVersion.id, date: Self.start.addingTimeInterval(minutes * 60)).version
        }
    }

    func resolved(_ test: TestStore, _ key: DocumentKey) async throws -> Version? {
        let result = try await test.store.resolve(key, registry: .standard, device: "x")
        guard case .resolved(let version, "last-writer-wins", .settled) = result else {
            Issue.record("\(result)")
            return nil
        }
        return version
    }

    @Test func theLatestAuthorDateWinsWholeByDefault() async throws {
        let test = try TestStore()
        try test.setAttributes("*.txt merge=last-writer-wins\n")
        // The phone saved last, but the laptop's date is later: the date decides, not the order of saving.
        let heads = try conflict(test, "a.txt", base: .text("0\n"), heads: [("laptop", .text("laptop\n"), 9), ("phone", .text("phone\n"), 5)])
        guard let version = try await resolved(test, "a.txt") else { return }
        #expect(try test.store.contents(of: version) == .text("laptop\n"))
        #expect(try test.git("rev-parse", "\(version.id.hex)^{tree}") == test.git("rev-parse", "\(heads[0].id.hex)^{tree}"))
        #expect(Set(version.parents) == Set(heads.map(\.id)))
    }

    @Test func onATieTheCurrentVersionWinsWhateverTheDeviceNames() async throws {
        let test = try TestStore()
        try test.setAttributes("*.txt merge=last-writer-wins\n")
        // Two heads at the same date, until the larger id is the smaller device name's: where a device-name rule and the
        // current-version rule part ways (ids hold the commit time, so each try is a new draw).
        var tied: (key: DocumentKey, heads: [Version])?
        for attempt in 0..<40 where tied == nil {
            let key = DocumentKey(stringLiteral: "tie-\(attempt).txt")
            let heads = try conflict(test, key, base: .text("0\n"), heads: [("zed", .text("zed\n"), 5), ("amy", .text("amy\n"), 5)])
            if heads[1].id > heads[0].id { tied = (key, heads) }
        }
        let (key, heads) = try #require(tied, "forty ties all had the larger id on the larger device name")
        let current = try #require(try test.store.currentVersion(of: key))
        #expect(current.id == heads[1].id)
        guard let kept = try await resolved(test, key) else { return }
        #expect(try test.store.contents(of: kept) == .text("amy\n"))
        #expect(kept.parents.first == current.id, "a resolution has the current version first")
    }

    @Test func keyGranularityKeepsChangesToDifferentKeysAndTheLatestChangeOfEachKey() async throws {
        let test = try TestStore()
        try test.setAttributes("*.json merge=last-writer-wins\n")
        try test.setConfig("resolver.last-writer-wins.granularity", "key")
        let base = #"{"theme": "light", "volume": 3, "zoom": 1, "obsolete": true, "both": 0}"#
        // laptop (earlier): theme, removes obsolete, both=1; phone (later): volume, adds font, both=2.
        let laptop = #"{"theme": "dark", "volume": 3, "zoom": 1, "both": 1}"#
        let phone = """
            {
              "theme": "light", "volume": 7, "zoom": 1, "obsolete": true, "both": 2, "font": "mono/serif"
            }

            """
        try conflict(test, "settings.json", base: .text(base), heads: [("laptop", .text(laptop), 1), ("phone", .text(phone), 2)])
        guard let version = try await resolved(test, "settings.json") else { return }
        // Sorted keys; indented and ending in a newline as the current (phone's) version was.
        #expect(
            try test.store.contents(of: version)
                == .text(
                    """
                    {
                      "both" : 2,
                      "font" : "mono/serif",
                      "theme" : "dark",
                      "volume" : 7,
                      "zoom" : 1
                    }

                    """))
    }

    @Test func aRemovalAndAChangeOfOneKeyFollowTheLatestAuthorDate() async throws {
        let test = try TestStore()
        try test.setConfig("resolver.last-writer-wins.granularity", "key")
        try test.setAttributes("*.json merge=last-writer-wins\n")
        let base = #"{"a":1,"b":1}"#
        try conflict(test, "x.json", base: .text(base), heads: [("laptop", .text(#"{"b":1}"#), 1), ("phone", .text(#"{"a":2,"b":1}"#), 2)])
        guard let changeWins = try await resolved(test, "x.json") else { return }
        #expect(try test.store.contents(of: changeWins) == .text(#"{"a":2,"b":1}"#))

        try conflict(test, "y.json", base: .text(base), heads: [("laptop", .text(#"{"a":2,"b":1}"#), 1), ("phone", .text(#"{"b":1}"#), 2)])
        guard let removalWins = try await resolved(test, "y.json") else { return }
        #expect(try test.store.contents(of: removalWins) == .text(#"{"b":1}"#))
    }

    @Test func threeHeadsAndATieOnAKeyGoToTheHeadTheCurrentVersionRulePutsFirst() async throws {
        let test = try TestStore()
        try test.setConfig("resolver.last-writer-wins.granularity", "key")
        try test.setAttributes("*.json merge=last-writer-wins\n")
        let heads = try conflict(
            test, "x.json", base: .text(#"{"k":0,"m":0,"n":0}"#),
            heads: [
                ("bob", .text(#"{"k":"bob","m":1,"n":0}"#), 3), ("amy", .text(#"{"k":"amy","m":0,"n":0}"#), 3),
                ("cat", .text(#"{"k":0,"m":0,"n":2}"#), 1),
            ])
        // bob and amy change k at the same date: the one with the larger id wins it; m and n have one changer each.
        let k = heads[0].id > heads[1].id ? "bob" : "amy"
        guard let version = try await resolved(test, "x.json") else { return }
        #expect(try test.store.contents(of: version) == .text(#"{"k":"\#(k)","m":1,"n":2}"#))
        #expect(version.parents.count == 3)
    }

    @Test(arguments: [PropertyListSerialization.PropertyListFormat.xml, .binary])
    func propertyListsMergeByKeyAndKeepTheCurrentVersionsFormat(format: PropertyListSerialization.PropertyListFormat) async throws {
        let test = try TestStore()
        try test.setConfig("resolver.last-writer-wins.granularity", "key")
        try test.setAttributes("*.plist merge=last-writer-wins\n")
        func plist(_ entries: [String: Any], _ format: PropertyListSerialization.PropertyListFormat = .xml) throws -> Data {
            try PropertyListSerialization.data(fromPropertyList: entries, format: format, options: 0)
        }
        let date = Date(timeIntervalSince1970: 1_800_000_000)
        try conflict(
            test, "Prefs.plist", base: try plist(["a": 1, "b": "x", "c": Data([1])]),
            heads: [
                ("laptop", try plist(["a": 2, "b": "x", "c": Data([1])]), 1),
                ("phone", try plist(["a": 1, "b": "y", "c": Data([1]), "d": date], format), 2),
            ])
        guard let version = try await resolved(test, "Prefs.plist") else { return }
        let content = try #require(try test.store.contents(of: version))
        var written = PropertyListSerialization.PropertyListFormat.openStep
        let merged = try #require(try PropertyListSerialization.propertyList(from: content, options: [], format: &written) as? [String: Any])
        #expect(written == format)
        #expect(merged["a"] as? Int == 2 && merged["b"] as? String == "y" && merged["c"] as? Data == Data([1]) && merged["d"] as? Date == date)
        #expect(merged.count == 4)
    }

    @Test(arguments: [
        ("s.json", "{\"a\": 1,", "is not valid JSON"),
        ("s.json", "[1, 2]", "is JSON but not an object, so it has no keys to merge"),
        ("p.plist", "<plist><dict><key>a</key>", "is not a valid property list"),
        ("p.plist", "<plist version=\"1.0\"><array/></plist>", "is a property list but not a dictionary, so it has no keys to merge"),
    ])
    func malformedHeadsAreClearErrorsNamingTheVersion(key: String, bad: String, message: String) async throws {
        let test = try TestStore()
        try test.setConfig("resolver.last-writer-wins.granularity", "key")
        try test.setAttributes("* merge=last-writer-wins\n")
        let good = key.hasSuffix(".json") ? "{\"a\": 2}" : "<plist version=\"1.0\"><dict><key>a</key><integer>2</integer></dict></plist>"
        let heads = try conflict(test, DocumentKey(key), base: .text(good), heads: [("laptop", .text(bad), 1), ("phone", .text(good), 2)])
        let before = snapshot(ofStore: test.path)
        await #expect {
            try await test.store.resolve(DocumentKey(key), registry: .standard, device: "x")
        } throws: { error in
            guard case .malformedContent(let errorKey, let version, let reason) = error as? TruceError else { return false }
            let line = (error as? TruceError)?.errorDescription ?? ""
            return errorKey.rawValue == key && version == heads[0].id && reason.hasPrefix(message)
                && line.hasPrefix("version \(heads[0].id.short) of '\(key)' \(message)") && !line.contains("\n")
        }
        #expect(snapshot(ofStore: test.path) == before)
    }

    @Test func aMalformedHeadIsAFailureAfterWhichTheFallbackRuns() async throws {
        let test = try TestStore()
        try test.setConfig("resolver.last-writer-wins.granularity", "key")
        try test.setConfig("resolver.last-writer-wins.fallback", "list-conflicts")
        try test.setAttributes("* merge=last-writer-wins\n")
        let heads = try conflict(
            test, "s.json", base: .text("{\"a\": 1}"), heads: [("laptop", .text("{\"a\": "), 1), ("phone", .text("{\"a\": 2}"), 2)])
        let before = snapshot(ofStore: test.path)
        let asked = try await test.store.resolve("s.json", registry: .standard, device: "x")
        guard case .needsPerson(_, "list-conflicts", let reasons) = asked else {
            Issue.record("\(asked)")
            return
        }
        #expect(reasons.count == 1)
        #expect(
            reasons.first?.hasPrefix("last-writer-wins: it failed: version \(heads[0].id.short) of 's.json' is not valid JSON") == true, "\(reasons)")
        #expect(snapshot(ofStore: test.path) == before)

        try test.setConfig("resolver.last-writer-wins.fallback", "overwrite-with-current")
        let settled = try await test.store.resolve("s.json", registry: .standard, device: "x")
        guard case .resolved(let version, "overwrite-with-current", .settled) = settled else {
            Issue.record("\(settled)")
            return
        }
        #expect(try test.store.contents(of: version) == .text("{\"a\": 2}"))
    }

    @Test func anUnknownGranularityIsAConfigError() async throws {
        let test = try TestStore()
        try test.setAttributes("*.json merge=last-writer-wins\n")
        try test.setConfig("resolver.last-writer-wins.granularity", "field")
        try conflict(test, "x.json", base: .text("{}"), heads: [("a", .text("{\"a\":1}"), 1), ("b", .text("{\"b\":1}"), 2)])
        #expect(throws: TruceError.invalidConfiguration("resolver.last-writer-wins.granularity = field: expected one of document, key")) {
            try test.store.resolverChoice(for: "x.json", registry: .standard)
        }
    }
}
