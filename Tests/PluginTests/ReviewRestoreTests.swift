import Foundation
import TestSupport
import Testing
import Truce

/// What the built-in resolvers record they dropped, what `review` lists of it, and `restore` bringing a value back.
@Suite(.timeLimit(.minutes(10))) struct ReviewRestoreTests {
    static let start = Date(timeIntervalSince1970: 1_796_000_000)

    /// A store where `*.json` is settled by last-writer-wins key by key.
    static func keyByKey() throws -> TestStore {
        let test = try TestStore()
        try test.setAttributes("*.json merge=last-writer-wins\n")
        try test.setConfig("resolver.last-writer-wins.granularity", "key")
        return test
    }

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    /// A value as the resolver writes it into a decision: compact JSON, keys sorted.
    static func text(_ value: Any?) -> Data? {
        guard let value else { return nil }
        let data = try! JSONSerialization.data(withJSONObject: [value], options: [.sortedKeys, .withoutEscapingSlashes])
        return Data(data.dropFirst().dropLast())
    }

    @Test func aLastWriterWinsResolutionOfAJSONDocumentListsEveryDroppedValue() async throws {
        let test = try Self.keyByKey()
        let base = #"{"theme":"light","font":"serif","size":12,"tags":["a"],"note":"n"}"#
        let made = try test.makeConflict(
            "settings.json", base: .text(base),
            heads: [
                ("laptop", .text(#"{"theme":"dark","font":"mono","size":14,"tags":["a","b"],"note":"n"}"#)),
                ("phone", .text(#"{"theme":"blue","font":"serif","size":14,"note":"n"}"#)),
                ("tablet", .text(#"{"theme":"light","font":"sans","size":12,"tags":["a"]}"#)),
            ])
        let (laptop, phone, tablet) = (made.heads[0], made.heads[1], made.heads[2])
        let resolution = try #require(try await test.store.resolve("settings.json", device: "desk").version)
        // size: the same change on two heads; note: one head's change. Neither drops anything.
        let dropped = try test.store.review("settings.json").droppedValues
        #expect(dropped.map(\.point) == ["/font", "/tags", "/theme"])
        #expect(dropped.map(\.value.version) == [laptop.id, laptop.id, laptop.id])
        #expect(dropped.map(\.value.content) == [.text(#""mono""#), .text(#"["a","b"]"#), .text(#""dark""#)])
        #expect(dropped.map(\.value.deviceName) == ["laptop", "laptop", "laptop"])
        #expect(dropped.map(\.value.modificationDate) == [laptop.modificationDate, laptop.modificationDate, laptop.modificationDate])
        #expect(dropped.map(\.kept?.version) == [tablet.id, phone.id, phone.id])
        #expect(dropped.map(\.kept?.content) == [.text(#""sans""#), nil, .text(#""blue""#)])
        #expect(dropped.allSatisfy { $0.rule == "the latest change wins" && $0.resolution == resolution.id })
        // Plain git shows them, and still reads the trailers.
        let message = try test.git("show", "-s", "--format=%B", resolution.id.hex)
        #expect(message.contains("  at \"/theme\": the latest change wins\n    kept \(phone.id.hex) "), "\(message)")
        #expect(message.contains("    dropped \(laptop.id.hex) \(ISO8601.format(laptop.modificationDate)) \"laptop\" = \"dark\"\n"))
        let trailers = try git(["interpret-trailers", "--parse"], input: Data(message.utf8)).output
        #expect(trailers.hasPrefix("Document: settings.json\nDevice: last-writer-wins\nResolved-By: last-writer-wins\n"))
        #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)
    }

    /// Random dictionaries on three heads: the dropped values `review` lists are exactly those a small model of the
    /// key-by-key rule drops (every head that changed a key to something other than the winner's value).
    @Test func theDroppedValuesAreExactlyThoseTheRuleReplaces() async throws {
        var random = SeededRandom(seed: 0x2704)
        var (conflicts, drops) = (0, 0)
        for round in 0..<12 {
            let test = try Self.keyByKey()
            let names = ["a", "b", "c", "d", "e", "f/g", "~h"]
            func value() -> Any? { random.chance(25) ? nil : random.pick([1, 2, "x", "y", ["z"], ["k": 1]] as [Any]) }
            var base: [String: Any] = [:]
            for name in names { base[name] = value() }
            let heads: [[String: Any]] = (0..<3).map { _ in
                var head = base
                for name in names where random.chance(40) { head[name] = value() }
                return head
            }
            func data(_ object: [String: Any]) throws -> Data { try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) }
            let made = try test.makeConflict(
                "r.json", base: try data(base), heads: try zip(["laptop", "phone", "tablet"], heads).map { ($0, try data($1)) })
            guard try test.store.state(of: "r.json") == .inConflict else { continue }
            conflicts += 1
            _ = try await test.store.resolve("r.json", device: "desk")
            var expected: [String] = []
            for name in names.sorted() {
                let changers = (0..<3).filter { Self.text(heads[$0][name]) != Self.text(base[name]) }
                guard let winner = changers.last else { continue }  // later heads are later
                for loser in changers where Self.text(heads[loser][name]) != Self.text(heads[winner][name]) {
                    let pointer = "/" + name.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
                    expected.append(
                        "\(pointer) \(made.heads[loser].deviceName) \(String(decoding: Self.text(heads[loser][name]) ?? Data("absent".utf8), as: UTF8.self))"
                    )
                }
            }
            let listed = try test.store.review("r.json").droppedValues.map {
                "\($0.point!) \($0.value.deviceName) \(String(decoding: $0.value.content ?? Data("absent".utf8), as: UTF8.self))"
            }
            #expect(listed.sorted() == expected.sorted(), "round \(round)")
            drops += expected.count
        }
        #expect(conflicts >= 10 && drops >= 10, "the rounds made conflicts that drop values: \(conflicts), \(drops)")
    }

    @Test func restoreBringsADroppedValueBackAndReviewShowsItRestored() async throws {
        let test = try Self.keyByKey()
        try test.makeConflict(
            "settings.json", base: .text(#"{"theme":"light","size":12}"#),
            heads: [("laptop", .text(#"{"theme":"dark","size":12}"#)), ("phone", .text(#"{"theme":"blue","size":12}"#))])
        try await test.store.resolve("settings.json", device: "desk")
        // Edited since: the restore starts from the current version and changes only the value it brings back.
        try test.store.save(.text(#"{"size":13,"theme":"blue"}"#), to: "settings.json", device: "phone")
        let dropped = try #require(try test.store.review("settings.json").droppedValues.first)
        let restored = try #require(try await test.store.restore(dropped, device: "laptop"))
        #expect(
            try Self.json(String(decoding: try test.store.contents(of: "settings.json")!, as: UTF8.self)) as NSDictionary == [
                "theme": "dark", "size": 13,
            ])
        #expect(restored.state == .settled)
        let after = try #require(try test.store.review("settings.json").droppedValues.first)
        #expect(after.restoredBy == restored.id)
        #expect(try test.store.history(of: "settings.json").first?.id == restored.id)
    }

    @Test func aNestedValueComesBackInPlaceWithEveryOtherByteKept() async throws {
        let test = try Self.keyByKey()
        try test.makeConflict(
            "settings.json", base: .text(#"{"editor": {"font": "serif", "size": 12}, "n": 1}"#),
            heads: [
                ("laptop", .text(#"{"editor": {"font": "mono", "size": 12}, "n": 1}"#)),
                ("phone", .text(#"{"editor": {"font": "sans", "size": 12}, "n": 1}"#)),
            ])
        try await test.store.resolve("settings.json", device: "desk")
        try test.store.save(.text(#"{"n": 2,   "editor": {"size": 13, "font": "sans"}}"#), to: "settings.json", device: "phone")
        let dropped = try #require(try test.store.review("settings.json").droppedValues.first)
        #expect(dropped.point == "/editor/font" && dropped.value.content == .text(#""mono""#))
        try await test.store.restore(dropped, device: "laptop")
        #expect(try test.store.contents(of: "settings.json") == .text(#"{"n": 2,   "editor": {"size": 13, "font": "mono"}}"#))
    }

    @Test func twoReplicasResolvingTheSameConflictWriteTheSameCommitDecisionsIncluded() async throws {
        let laptop = try Self.keyByKey()
        let phone = try Self.keyByKey()
        try laptop.makeConflict(
            "settings.json", base: .text(#"{"theme":"light","font":"serif"}"#),
            heads: [("laptop", .text(#"{"theme":"dark","font":"mono"}"#)), ("phone", .text(#"{"theme":"blue","font":"sans"}"#))])
        _ = try await phone.store.sync(with: laptop.path)
        let here = try #require(try await laptop.store.resolve("settings.json", device: "laptop").version)
        let there = try #require(try await phone.store.resolve("settings.json", device: "phone").version)
        #expect(here.id == there.id)
        #expect(try laptop.git("cat-file", "commit", here.id.hex) == phone.git("cat-file", "commit", there.id.hex))
        #expect(try laptop.git("show", "-s", "--format=%B", here.id.hex).contains("Decisions:\n"))
        _ = try await phone.store.sync(with: laptop.path)
        for replica in [laptop, phone] {
            #expect(try replica.store.versions(of: "settings.json").heads.map(\.id) == [here.id])
            // Each replica's review lists it, run by its own device.
            let reviewed = try #require(try replica.store.review().resolutions.first)
            #expect(reviewed.droppedValues.map(\.point) == ["/font", "/theme"])
        }
        #expect(try laptop.store.review().resolutions.map(\.author) == ["laptop"])
        #expect(try phone.store.review().resolutions.map(\.author) == ["phone"])
    }

    @Test func theDeleteConflictPolicyRecordsWhatItDrops() async throws {
        let test = try TestStore()
        try test.setConfig("truce.deleteConflict", "delete-wins")
        let made = try test.makeConflict("n.md", base: .text("a\n"), heads: [("laptop", .text("edited\n")), ("phone", nil)])
        try await test.store.resolve("n.md", device: "desk")
        let dropped = try #require(try test.store.review("n.md").droppedValues.first)
        #expect(dropped.point == nil && dropped.value.version == made.heads[0].id && dropped.kept?.version == made.heads[1].id)
        #expect(dropped.rule == "delete-wins: the deletion stands")
        // The whole document comes back as the edit's content.
        try await test.store.restore(dropped, device: "me")
        #expect(try test.store.contents(of: "n.md") == .text("edited\n"))

        // modify-wins drops the deletion; restoring it deletes the document again.
        let other = try TestStore()
        let deleted = try other.makeConflict("n.md", base: .text("a\n"), heads: [("laptop", .text("edited\n")), ("phone", nil)])
        try await other.store.resolve("n.md", device: "desk")
        let deletion = try #require(try other.store.review("n.md").droppedValues.first)
        #expect(deletion.value.version == deleted.heads[1].id && deletion.rule == "modify-wins: the edit stands")
        try await other.store.restore(deletion, device: "me")
        #expect(try other.store.state(of: "n.md") == .deleted)
    }

    @Test func keepingOneVersionWholeListsTheOthersAndRestoreBringsOneBackWhole() async throws {
        for resolver in ["overwrite-with-current", "last-writer-wins"] {
            let test = try TestStore()
            try test.setAttributes("*.txt merge=\(resolver)\n")
            let made = try test.makeConflict(
                "a.txt", base: .text("base\n"), heads: [("laptop", .text("laptop\n")), ("phone", .text("phone\n")), ("tablet", .text("tablet\n"))])
            try await test.store.resolve("a.txt", device: "desk")
            let dropped = try test.store.review("a.txt").droppedValues
            #expect(dropped.map(\.value.version) == [made.heads[1].id, made.heads[0].id], "\(resolver)")
            #expect(dropped.allSatisfy { $0.point == nil && $0.kept?.version == made.heads[2].id && $0.value.content == nil })
            try await test.store.restore(dropped[1], device: "me")
            #expect(try test.store.contents(of: "a.txt") == .text("laptop\n"))
        }
    }

    @Test func deduplicateListsTheRecordsItMergedAwayAndPutsOneBack() async throws {
        let test = try TestStore()
        try test.setAttributes("*.json merge=deduplicate\n")
        try test.setConfig("resolver.deduplicate.key", "uuid")
        try test.setConfig("resolver.deduplicate.keep", "latest:at")
        let made = try test.makeConflict(
            "list.json", base: .text(#"[{"uuid":"b","name":"Bread","at":1}]"#),
            heads: [
                ("laptop", .text(#"[{"uuid":"b","name":"Brot","at":5},{"uuid":"c","at":2}]"#)),
                ("phone", .text(#"[{"uuid":"b","name":"Pain","at":3},{"uuid":"c","at":2}]"#)),
            ])
        try await test.store.resolve("list.json", device: "desk")
        let dropped = try test.store.review("list.json").droppedValues
        #expect(dropped.map(\.point) == [#"uuid="b""#])
        #expect(dropped.first?.value.version == made.heads[1].id && dropped.first?.value.content == .text(#"{"at":3,"name":"Pain","uuid":"b"}"#))
        #expect(dropped.first?.kept?.content == .text(#"{"at":5,"name":"Brot","uuid":"b"}"#))
        #expect(dropped.first?.rule == "the record with the latest at stays")
        try await test.store.restore(try #require(dropped.first), device: "me")
        #expect(try test.store.contents(of: "list.json") == .text(#"[{"at":3,"name":"Pain","uuid":"b"},{"at":2,"uuid":"c"}]"#))
    }

    @Test(arguments: [("three-way", "a.md"), ("union", "a.md"), ("structured", "a.json")])
    func resolversThatDropNothingRecordNothing(resolver: String, key: DocumentKey) async throws {
        let test = try TestStore()
        try test.setAttributes("*.md merge=\(resolver)\n*.json merge=\(resolver)\n")
        let (base, one, two) =
            key.rawValue.hasSuffix(".json")
            ? (#"{"a":1,"b":1}"#, #"{"a":2,"b":1}"#, #"{"a":1,"b":2}"#) : ("1\n2\n3\n4\n5\n", "one\n2\n3\n4\n5\n", "1\n2\n3\n4\nfive\n")
        try test.makeConflict(key, base: .text(base), heads: [("laptop", .text(one)), ("phone", .text(two))])
        let resolution = try #require(try await test.store.resolve(key, device: "desk").version)
        #expect(resolution.resolvedBy == resolver)
        let reviewed = try #require(try test.store.review().resolutions.first)
        #expect(reviewed.decisions.isEmpty && reviewed.problem == nil)
        #expect(!(try test.git("show", "-s", "--format=%B", resolution.id.hex)).contains("Decisions:"))
    }
}
