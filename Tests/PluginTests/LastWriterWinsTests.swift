import Foundation
import TestSupport
import Testing
import Truce
import TruceTesting

@Suite(.timeLimit(.minutes(10))) struct LastWriterWinsTests {
    static let start = Date(timeIntervalSince1970: 1_796_000_000)

    /// `minutes` after `start`, when the base is saved.
    static func at(_ minutes: Double) -> Date { start.addingTimeInterval(minutes * 60) }

    /// The base of every conflict here: `content`, saved by "origin" at `start`.
    static func base(_ content: Data) -> FixtureVersion { FixtureVersion(data: content, device: "origin", date: start) }

    /// Saves a base, then two heads from it at the same date, `minutes` after it, in the order given, and returns the
    /// heads. A `ConflictFixture` does not choose which of two heads at one date is current (it refuses such a fixture):
    /// these tests are about that choice.
    func tie(_ test: TestStore, _ key: DocumentKey, base: Data, heads: [(String, Data)], at minutes: Double) throws -> [Version] {
        let baseVersion = try test.store.save(base, to: key, device: "origin", date: Self.start)
        return try heads.map { device, content in
            try test.store.save(content, to: key, device: device, base: baseVersion.id, date: Self.at(minutes)).version
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
        // The phone's version is written after the laptop's, but the laptop's date is later: the date decides, not the
        // order of writing.
        let made = try ConflictFixture(
            key: "a.txt", base: Self.base(.text("0\n")), current: FixtureVersion("laptop\n", device: "laptop", date: Self.at(9)),
            conflicts: [FixtureVersion("phone\n", device: "phone", date: Self.at(5))]
        ).write(into: test.store)
        guard let version = try await resolved(test, "a.txt") else { return }
        #expect(try test.store.contents(of: version) == .text("laptop\n"))
        #expect(try test.git("rev-parse", "\(version.id.hex)^{tree}") == test.git("rev-parse", "\(made.current.id.hex)^{tree}"))
        #expect(Set(version.parents) == [made.current.id, made.conflicts[0].id])
    }

    @Test func onATieTheCurrentVersionWinsWhateverTheDeviceNames() async throws {
        let test = try TestStore()
        try test.setAttributes("*.txt merge=last-writer-wins\n")
        // Two heads at the same date, until the larger id is the smaller device name's: where a device-name rule and the
        // current-version rule part ways (ids hold the commit time, so each try is a new draw).
        var tied: (key: DocumentKey, heads: [Version])?
        for attempt in 0..<40 where tied == nil {
            let key = DocumentKey(stringLiteral: "tie-\(attempt).txt")
            let heads = try tie(test, key, base: .text("0\n"), heads: [("zed", .text("zed\n")), ("amy", .text("amy\n"))], at: 5)
            if heads[1].id > heads[0].id { tied = (key, heads) }
        }
        let (key, heads) = try #require(tied, "forty ties all had the larger id on the larger device name")
        let current = try #require(try test.store.currentVersion(of: key))
        #expect(current.id == heads[1].id)
        guard let kept = try await resolved(test, key) else { return }
        #expect(try test.store.contents(of: kept) == .text("amy\n"))
        #expect(kept.parents.first == current.id, "a resolution has the current version first")
    }

    /// settings.json resolved key by key: `phone` the current version, `laptop` an earlier one; nil when not resolved.
    func keyByKey(base: String, laptop: String, phone: String) async throws -> Data? {
        let test = try TestStore()
        try test.setAttributes("*.json merge=last-writer-wins\n")
        try test.setConfig("resolver.last-writer-wins.granularity", "key")
        try ConflictFixture(
            key: "settings.json", base: Self.base(.text(base)), current: FixtureVersion(phone, device: "phone", date: Self.at(2)),
            conflicts: [FixtureVersion(laptop, device: "laptop", date: Self.at(1))]
        ).write(into: test.store)
        guard let version = try await resolved(test, "settings.json") else { return nil }
        return try test.store.contents(of: version)
    }

    @Test func keyGranularityKeepsChangesToDifferentKeysAndTheLatestChangeOfEachKey() async throws {
        let base = #"{"theme": "light", "volume": 3, "zoom": 1, "obsolete": true, "both": 0}"#
        // laptop (earlier): theme, removes obsolete, both=1; phone (later): volume, adds font, both=2.
        let laptop = #"{"theme": "dark", "volume": 3, "zoom": 1, "both": 1}"#
        let phone = """
            {
              "theme": "light", "volume": 7, "zoom": 1, "obsolete": true, "both": 2, "font": "mono/serif"
            }

            """
        // The current (phone's) bytes, with only laptop's theme put in and the key it removed taken out.
        #expect(
            try await keyByKey(base: base, laptop: laptop, phone: phone)
                == .text(
                    """
                    {
                      "theme": "dark", "volume": 7, "zoom": 1, "both": 2, "font": "mono/serif"
                    }

                    """))
    }

    @Test func keyGranularityMergesNestedObjectsKeyByKeyAndKeepsEveryUntouchedByte() async throws {
        let base = #"{"title":"Shopping","n":2,"editor":{"font":"serif","size":12,"tabs":[1]},"z":null}"#
        // laptop (earlier) changes the editor's font and adds a member to it; phone (later) its size and the title.
        let laptop = #"{"title":"Shopping","n":2,"editor":{"font":"mono","size":12,"tabs":[1],"wrap":true},"z":null}"#
        let phone = #"{"title":"Groceries","n":2,"editor":{"font":"serif","size":14,"tabs":[1]},"z":null}"#
        #expect(
            try await keyByKey(base: base, laptop: laptop, phone: phone)
                == .text(#"{"title":"Groceries","n":2,"editor":{"font":"mono","size":14,"tabs":[1],"wrap":true},"z":null}"#))
    }

    @Test func aRemovalAndAChangeOfOneKeyFollowTheLatestAuthorDate() async throws {
        let test = try TestStore()
        try test.setConfig("resolver.last-writer-wins.granularity", "key")
        try test.setAttributes("*.json merge=last-writer-wins\n")
        let base = #"{"a":1,"b":1}"#
        try ConflictFixture(
            key: "x.json", base: Self.base(.text(base)), current: FixtureVersion(#"{"a":2,"b":1}"#, device: "phone", date: Self.at(2)),
            conflicts: [FixtureVersion(#"{"b":1}"#, device: "laptop", date: Self.at(1))]
        ).write(into: test.store)
        guard let changeWins = try await resolved(test, "x.json") else { return }
        #expect(try test.store.contents(of: changeWins) == .text(#"{"a":2,"b":1}"#))

        try ConflictFixture(
            key: "y.json", base: Self.base(.text(base)), current: FixtureVersion(#"{"b":1}"#, device: "phone", date: Self.at(2)),
            conflicts: [FixtureVersion(#"{"a":2,"b":1}"#, device: "laptop", date: Self.at(1))]
        ).write(into: test.store)
        guard let removalWins = try await resolved(test, "y.json") else { return }
        #expect(try test.store.contents(of: removalWins) == .text(#"{"b":1}"#))
    }

    @Test func threeHeadsAndATieOnAKeyGoToTheHeadTheCurrentVersionRulePutsFirst() async throws {
        let test = try TestStore()
        try test.setConfig("resolver.last-writer-wins.granularity", "key")
        try test.setAttributes("*.json merge=last-writer-wins\n")
        let heads = try tie(
            test, "x.json", base: .text(#"{"k":0,"m":0,"n":0}"#),
            heads: [("bob", .text(#"{"k":"bob","m":1,"n":0}"#)), ("amy", .text(#"{"k":"amy","m":0,"n":0}"#))], at: 3)
        let base = try #require(heads[0].parents.first)
        try test.store.save(.text(#"{"k":0,"m":0,"n":2}"#), to: "x.json", device: "cat", base: base, date: Self.at(1))
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
        try ConflictFixture(
            key: "Prefs.plist", base: Self.base(try plist(["a": 1, "b": "x", "c": Data([1])])),
            current: FixtureVersion(data: try plist(["a": 1, "b": "y", "c": Data([1]), "d": date], format), device: "phone", date: Self.at(2)),
            conflicts: [FixtureVersion(data: try plist(["a": 2, "b": "x", "c": Data([1])]), device: "laptop", date: Self.at(1))]
        ).write(into: test.store)
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
        let laptop = try ConflictFixture(
            key: DocumentKey(key), base: Self.base(.text(good)), current: FixtureVersion(good, device: "phone", date: Self.at(2)),
            conflicts: [FixtureVersion(bad, device: "laptop", date: Self.at(1))]
        ).write(into: test.store).conflicts[0]
        let before = snapshot(ofStore: test.path)
        await #expect {
            try await test.store.resolve(DocumentKey(key), registry: .standard, device: "x")
        } throws: { error in
            guard case .malformedContent(let errorKey, let version, let reason) = error as? TruceError else { return false }
            let line = (error as? TruceError)?.errorDescription ?? ""
            return errorKey.rawValue == key && version == laptop.id && reason.hasPrefix(message)
                && line.hasPrefix("version \(laptop.id.short) of '\(key)' \(message)") && !line.contains("\n")
        }
        #expect(snapshot(ofStore: test.path) == before)
    }

    @Test func aMalformedHeadIsAFailureAfterWhichTheFallbackRuns() async throws {
        let test = try TestStore()
        try test.setConfig("resolver.last-writer-wins.granularity", "key")
        try test.setConfig("resolver.last-writer-wins.fallback", "list-conflicts")
        try test.setAttributes("* merge=last-writer-wins\n")
        let laptop = try ConflictFixture(
            key: "s.json", base: Self.base(.text("{\"a\": 1}")), current: FixtureVersion("{\"a\": 2}", device: "phone", date: Self.at(2)),
            conflicts: [FixtureVersion("{\"a\": ", device: "laptop", date: Self.at(1))]
        ).write(into: test.store).conflicts[0]
        let before = snapshot(ofStore: test.path)
        let asked = try await test.store.resolve("s.json", registry: .standard, device: "x")
        guard case .needsPerson(_, "list-conflicts", let reasons) = asked else {
            Issue.record("\(asked)")
            return
        }
        #expect(reasons.count == 1)
        #expect(
            reasons.first?.hasPrefix("last-writer-wins: it failed: version \(laptop.id.short) of 's.json' is not valid JSON") == true, "\(reasons)")
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
        try ConflictFixture(
            key: "x.json", base: Self.base(.text("{}")), current: FixtureVersion("{\"b\":1}", device: "b", date: Self.at(2)),
            conflicts: [FixtureVersion("{\"a\":1}", device: "a", date: Self.at(1))]
        ).write(into: test.store)
        #expect(throws: TruceError.invalidConfiguration("resolver.last-writer-wins.granularity = field: expected one of document, key")) {
            try test.store.resolverChoice(for: "x.json", registry: .standard)
        }
    }
}
