import Foundation
import TestSupport
import Testing

/// `truce conflicts` with three heads (N-way), and a person's answers given to `truce resolve`.
@Suite(.timeLimit(.minutes(10))) struct ConflictsCommandTests {
    static let key = "notes/todo.md"
    static let base = "1\n2\n3\n4\n5\n6\n7\n"
    /// Changes line 2 (into two lines) and line 6.
    static let laptop = "1\n2-laptop\n2-laptop-b\n3\n4\n5\n6-laptop\n7\n"
    /// Changes line 2, and line 4 into two lines (a change no other head makes, so it is settled).
    static let phone = "1\n2-phone\n3\n4-phone\n4b\n5\n6\n7\n"
    /// Changes line 6 only; saved last, so it is the current version.
    static let tablet = "1\n2\n3\n4\n5\n6-tablet\n7\n"

    /// Line 2 is a conflict point (laptop and phone disagree), line 4 is settled (only the phone changed it),
    /// line 6 is a conflict point (laptop and tablet disagree).
    @discardableResult
    static func saveThreeHeadConflict(in store: CLIStore) throws -> SavedConflict {
        try store.saveConflict(key, base: .text(base), heads: [("laptop", .text(laptop)), ("phone", .text(phone)), ("tablet", .text(tablet))])
    }

    @Test func jsonListsEveryHeadAtEveryPoint() throws {
        let store = try CLIStore()
        let conflict = try Self.saveThreeHeadConflict(in: store)
        let (laptop, phone, tablet) = (conflict.heads[0], conflict.heads[1], conflict.heads[2])
        let before = snapshot(ofStore: store.path)
        let json = try store.json("conflicts", Self.key)
        #expect(snapshot(ofStore: store.path) == before)
        #expect(json["document"] as? String == Self.key)
        let points = try #require(json["points"] as? [[String: Any]])
        #expect(points.map { $0["id"] as? String } == ["H1", "H2"])

        struct Expected {
            let id: String
            let baseStart: Int
            let base: String
            let sides: [(String, String, Int, Int)]
        }
        // Sides: current first, then the conflict versions newest first; (version, text, start line, line count).
        let expected = [
            Expected(
                id: "H1", baseStart: 2, base: "2\n",
                sides: [(tablet, "2\n", 2, 1), (phone, "2-phone\n", 2, 1), (laptop, "2-laptop\n2-laptop-b\n", 2, 2)]),
            // The phone's extra line 4b moves its line 6 to 7, the laptop's extra 2-laptop-b moves its line 6 to 7.
            Expected(
                id: "H2", baseStart: 6, base: "6\n",
                sides: [(tablet, "6-tablet\n", 6, 1), (phone, "6\n", 7, 1), (laptop, "6-laptop\n", 7, 1)]),
        ]
        let contents = [laptop: Self.laptop, phone: Self.phone, tablet: Self.tablet]
        for (point, expected) in zip(points, expected) {
            #expect(point["id"] as? String == expected.id)
            let baseLines = try #require(point["baseLines"] as? [String: Int])
            #expect(baseLines == ["start": expected.baseStart, "count": 1])
            #expect(point["base"] as? String == expected.base)
            // The base's text is what the base holds at those lines.
            #expect(Self.lines(Self.base, start: expected.baseStart, count: 1) == expected.base)

            let sides = try #require(point["sides"] as? [[String: Any]])
            #expect(sides.map { $0["version"] as? String } == expected.sides.map { $0.0 })
            #expect(sides.map { $0["isCurrent"] as? Bool } == [true, false, false])
            #expect(sides.map { $0["deviceName"] as? String } == ["tablet", "phone", "laptop"])
            for (side, (version, text, start, count)) in zip(sides, expected.sides) {
                #expect(side["text"] as? String == text, "\(expected.id) \(version)")
                #expect(side["lines"] as? [String: Int] == ["start": start, "count": count], "\(expected.id) \(version)")
                // And the range points at that text in the head's own bytes, as `git show VERSION:KEY` prints them.
                let shown = try store.gitInStore("show", "\(version):\(Self.key)").output
                #expect(shown == contents[version])
                #expect(Self.lines(shown, start: start, count: count) == text, "\(expected.id) \(version)")
            }
        }
    }

    @Test func textListsThePointsAndASettledDocumentHasNone() throws {
        let store = try CLIStore()
        let conflict = try Self.saveThreeHeadConflict(in: store)
        let result = try store.run("conflicts", Self.key)
        #expect(result.status == 0)
        let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first == "\(Self.key): 2 conflict points among 3 heads (base \(conflict.base.prefix(7)))")
        #expect(lines.contains("H1  base line 2") && lines.contains("H2  base line 6"), "stdout:\n\(result.output)")
        #expect(lines.contains("  conflict \(conflict.heads[0].prefix(7)) laptop, lines 2-3:"), "stdout:\n\(result.output)")
        #expect(lines.contains("  current \(conflict.current.prefix(7)) tablet, line 6:"))

        try store.save("settled.md", "x\n")
        let settled = try store.run("conflicts", "settled.md")
        #expect(settled.status == 0)
        #expect(settled.output == "settled.md: not in conflict\n")
        let json = try store.json("conflicts", "settled.md")
        #expect((json["points"] as? [Any])?.isEmpty == true)
    }

    /// Answers per conflict point; `$laptop`, `$phone`, `$base` stand for 8-digit id prefixes, `$FILE` for a file holding "six\nsix-b\n".
    struct Answers: CustomTestStringConvertible, Sendable {
        let takes: [String]
        let expected: String
        var testDescription: String { takes.joined(separator: " ") }
    }

    /// Every expected text keeps the phone's settled change to line 4.
    static let answers: [Answers] = [
        Answers(takes: ["H1=ours", "H2=$laptop"], expected: "1\n2\n3\n4-phone\n4b\n5\n6-laptop\n7\n"),
        Answers(takes: ["H1=$phone", "H2=base"], expected: "1\n2-phone\n3\n4-phone\n4b\n5\n6\n7\n"),
        // `both`: each distinct head text once, current first (the tablet kept the base's "2").
        Answers(takes: ["H1=both", "H2=file:$FILE"], expected: "1\n2\n2-phone\n2-laptop\n2-laptop-b\n3\n4-phone\n4b\n5\nsix\nsix-b\n7\n"),
        Answers(takes: ["H1=$base", "H2=both"], expected: "1\n2\n3\n4-phone\n4b\n5\n6-tablet\n6\n6-laptop\n7\n"),
    ]

    @Test(arguments: answers)
    func takeWritesTheAnsweredText(answers: Answers) throws {
        let store = try CLIStore()
        let conflict = try Self.saveThreeHeadConflict(in: store)
        let file = store.directory.write(.text("six\nsix-b\n"), to: "six.txt")
        let replacements = ["$laptop": conflict.heads[0], "$phone": conflict.heads[1], "$base": conflict.base]
        let takes = answers.takes.flatMap { take -> [String] in
            var take = take.replacingOccurrences(of: "$FILE", with: file)
            for (name, id) in replacements { take = take.replacingOccurrences(of: name, with: String(id.prefix(8))) }
            return ["--take", take]
        }
        let result = try truce(["resolve", Self.key] + takes + ["--device", "desk"], store: store.path)
        #expect(result.status == 0, "stderr: \(result.errorOutput)")
        let resolution = try resolutionID(in: result, key: Self.key, resolver: "person")
        #expect(try store.run("cat", Self.key).output == answers.expected)
        #expect(try store.gitInStore("show", "\(resolution):\(Self.key)").output == answers.expected)
        try expectResolution(resolution, settles: conflict, key: Self.key, resolver: "person", in: store)
    }

    @Test func bothTakesATextTwoHeadsShareOnlyOnce() throws {
        let store = try CLIStore()
        let conflict = try store.saveConflict(
            "a.txt", base: .text("a\nb\nc\n"),
            heads: [("laptop", .text("a\nX\nc\n")), ("phone", .text("a\nY\nc\n")), ("tablet", .text("a\nX\nc\n"))])
        let result = try store.run("resolve", "a.txt", "--take", "H1=both", "--device", "desk")
        #expect(result.status == 0, "stderr: \(result.errorOutput)")
        let resolution = try resolutionID(in: result, key: "a.txt", resolver: "person")
        #expect(try store.run("cat", "a.txt").output == "a\nX\nY\nc\n")
        try expectResolution(resolution, settles: conflict, key: "a.txt", resolver: "person", in: store)
    }

    @Test func contentFromAFileOrStandardInputIsWrittenByteForByte() throws {
        for source in ["file", "stdin"] {
            let store = try CLIStore()
            let conflict = try Self.saveThreeHeadConflict(in: store)
            let bytes = Data("merged by hand\r\n\u{0}no newline at the end".utf8)
            let file = store.directory.write(bytes, to: "merged.md")
            let result =
                source == "file"
                ? try store.run("resolve", Self.key, "--content", file, "--device", "desk")
                : try store.run("resolve", Self.key, "--content", "-", "--device", "desk", input: bytes)
            #expect(result.status == 0, "\(source): \(result.errorOutput)")
            let resolution = try resolutionID(in: result, key: Self.key, resolver: "person")
            #expect(try store.run("cat", Self.key).stdout == bytes, "\(source)")
            #expect(try store.gitInStore("show", "\(resolution):\(Self.key)").stdout == bytes, "\(source)")
            try expectResolution(resolution, settles: conflict, key: Self.key, resolver: "person", in: store)
        }
    }

    @Test func deleteSettlesTheConflictAsADeletion() throws {
        let store = try CLIStore()
        let conflict = try Self.saveThreeHeadConflict(in: store)
        let result = try store.run("resolve", Self.key, "--delete", "--device", "desk")
        #expect(result.status == 0, "stderr: \(result.errorOutput)")
        let resolution = try resolutionID(in: result, key: Self.key, resolver: "person")
        // git agrees the resolution's tree lacks the key.
        #expect(try store.gitInStore("cat-file", "-e", "\(resolution):\(Self.key)").status != 0)
        #expect(try store.gitInStore("ls-tree", "-r", "--name-only", resolution).output.isEmpty)
        try expectResolution(resolution, settles: conflict, key: Self.key, resolver: "person", in: store, deleted: true)
        let cat = try store.run("cat", Self.key)
        #expect(cat.status == 2)
        #expect(cat.errorLines.count == 1)
        #expect(try store.run("versions", Self.key).output.hasPrefix("\(Self.key): deleted\n"))
    }

    /// Lines `start`…`start + count - 1` (numbered from 1) of `text`, each with its newline.
    static func lines(_ text: String, start: Int, count: Int) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().dropFirst(start - 1).prefix(count).map { $0 + "\n" }.joined()
    }

    @Test func crlfLinesAreQuotedOneByOneWithTheirCarriageReturnShown() throws {
        let store = try CLIStore()
        try store.saveConflict("crlf.txt", base: .text("a\r\nb\r\n"), heads: [("laptop", .text("A\r\nb\r\n")), ("phone", .text("Z\r\nb\r\n"))])
        let result = try store.run("conflicts", "crlf.txt")
        #expect(result.status == 0, "\(result.errorOutput)")
        let lines = result.output.split(separator: "\n").map(String.init)
        #expect(lines.contains("    | A\\x0D"), "\(lines)")
        #expect(lines.contains("    | Z\\x0D"), "\(lines)")
        #expect(!result.stdout.contains(0x0D))
    }
}
