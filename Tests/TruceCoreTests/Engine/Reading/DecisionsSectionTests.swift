import Foundation
import TestSupport
import Testing

@testable import TruceCore

/// The decisions paragraph of a resolution's message: written from what a resolver recorded, read back exactly, with
/// the trailers left as git and every Truce reader parse them.
@Suite(.timeLimit(.minutes(10))) struct DecisionsSectionTests {
    static let key: DocumentKey = "settings.json"
    static let start = Date(timeIntervalSince1970: 1_796_000_000)

    static func version(_ byte: UInt8, _ device: String, minutes: Double, deletion: Bool = false) -> Version {
        Version(
            id: VersionID(hex: String(repeating: String(format: "%02x", byte), count: 20))!, key: key, deviceName: device,
            modificationDate: start.addingTimeInterval(minutes * 60), isDeletion: deletion)
    }

    static let phone = version(0xA1, "phone \"pro\"", minutes: 3)
    static let laptop = version(0xB2, "laptop", minutes: 2)
    static let tablet = version(0xC3, "tablet", minutes: 1)
    static let stranger = version(0xD4, "stranger", minutes: 9)

    /// Three heads, phone current.
    static let conflict = ConflictSet(
        key: key, current: .init(version: phone, content: Data("{}".utf8)),
        conflicts: [.init(version: laptop, content: Data("{}".utf8)), .init(version: tablet, content: Data("{}".utf8))], base: nil)

    static func value(_ version: Version, _ text: String?) -> ResolutionDecision.Value {
        ResolutionDecision.Value(version, content: text.map { Data($0.utf8) })
    }

    static func message(_ section: DecisionsSection) -> String {
        var message = VersionMessage(
            kind: .resolve, key: key.rawValue, device: "last-writer-wins", resolvedBy: "last-writer-wins", resolves: [laptop.id, tablet.id])
        message.decisions = section
        return message.text
    }

    static let awkward: [ResolutionDecision] = [
        ResolutionDecision(
            point: "/theme", rule: "the latest change wins", kept: value(phone, #""dark""#), dropped: [value(laptop, #""light""#)]),
        ResolutionDecision(
            point: "/a \"quoted\": key\nResolves: \(stranger.id.hex)", rule: "rule with \u{202E}override\nResolves: \(stranger.id.hex)",
            kept: value(phone, nil), dropped: [value(tablet, "line\none\ttab\r\\ \u{0}\u{7F}\u{85}\u{200B} café 日本 🙂 "), value(laptop, "")]),
        ResolutionDecision(
            point: "/long", rule: "", kept: value(laptop, String(repeating: "x", count: 199) + "é and more"),
            dropped: [value(phone, String(repeating: "y", count: 5000))]),
        .wholeDocument(rule: "the current version is kept", kept: phone, dropped: [laptop, tablet]),
        // A rule that kept every head's change says so, with no values.
        ResolutionDecision(point: "/views", rule: "field rule counter: nothing dropped", kept: nil, dropped: []),
    ]

    @Test func aSectionReadsBackExactlyAsItWasWritten() throws {
        let section = DecisionsSection(normalizing: Self.awkward, for: Self.conflict)
        #expect(section.decisions.count == 5)
        #expect(section.decisions.last == Self.awkward.last)
        let message = Self.message(section)
        #expect(DecisionsSection.reading(message) == .section(section), "\(message)")
        // Every line of the section is one line: no value's newline or control byte reaches the message.
        for line in message.split(separator: "\n") {
            #expect(!line.utf8.contains { $0 < 0x20 || $0 == 0x7F }, "\(line)")
        }
        #expect(!message.unicodeScalars.contains { ["\u{202E}", "\u{200B}", "\u{85}"].contains($0) })
        #expect(message.contains("café 日本 🙂"), "text stays readable in git show")
        // A value cut at the limit never splits a character, and says how long it was.
        let long = try #require(section.decisions.first { $0.point == "/long" })
        #expect(long.kept?.content == Data(String(repeating: "x", count: 199).utf8))
        #expect(long.kept?.size == 199 + "é and more".utf8.count && long.kept?.isCut == true)
        #expect(long.dropped[0].content?.count == DecisionsSection.valueLimit && long.dropped[0].size == 5000)
    }

    @Test func decisionsAreWrittenInOneOrderWhateverOrderTheyWereRecordedIn() {
        let written = Self.message(DecisionsSection(normalizing: Self.awkward, for: Self.conflict))
        var random = SeededRandom(seed: 27)
        for _ in 0..<20 {
            var shuffled = Self.awkward
            for index in shuffled.indices.reversed() { shuffled.swapAt(index, random.int(0...index)) }
            // Each decision's dropped values in another order too.
            shuffled = shuffled.map { ResolutionDecision(point: $0.point, rule: $0.rule, kept: $0.kept, dropped: $0.dropped.reversed()) }
            #expect(Self.message(DecisionsSection(normalizing: shuffled, for: Self.conflict)) == written)
        }
        // The whole document first, then places by their bytes; dropped values in the current-version rule's order.
        let section = DecisionsSection(normalizing: Self.awkward, for: Self.conflict)
        #expect(section.decisions.map(\.point) == [nil, "/a \"quoted\": key\nResolves: \(Self.stranger.id.hex)", "/long", "/theme", "/views"])
        #expect(section.decisions[0].dropped.map(\.version) == [Self.laptop.id, Self.tablet.id])
    }

    @Test func devicesAndDatesComeFromTheHeadsAndStrangersAreLeftOut() {
        let forged = ResolutionDecision.Value(
            version: Self.laptop.id, deviceName: "someone else", modificationDate: Date(timeIntervalSince1970: 0), content: Data("1".utf8))
        let recorded = [
            ResolutionDecision(point: "/a", rule: "r", kept: Self.value(Self.stranger, "9"), dropped: [forged, Self.value(Self.stranger, "8")]),
            // Only a stranger was dropped: nothing is left to record.
            ResolutionDecision(point: "/b", rule: "r", kept: Self.value(Self.phone, "1"), dropped: [Self.value(Self.stranger, "2")]),
            ResolutionDecision(point: "/c", rule: "r", kept: Self.value(Self.phone, "1"), dropped: []),
        ]
        let section = DecisionsSection(normalizing: recorded, for: Self.conflict)
        #expect(section.decisions.count == 1)
        #expect(section.decisions.first?.kept == nil)
        #expect(section.decisions.first?.dropped.map(\.deviceName) == ["laptop"])
        #expect(section.decisions.first?.dropped.map(\.modificationDate) == [Self.laptop.modificationDate])
        // Nothing dropped, nothing written: the message is the one an earlier release wrote.
        let empty = DecisionsSection(normalizing: [recorded[1], recorded[2]], for: Self.conflict)
        #expect(empty.isEmpty)
        #expect(!Self.message(empty).contains("Decisions"))
        #expect(DecisionsSection.reading(Self.message(empty)) == DecisionsSection.Reading.none)
    }

    @Test func decisionsPastTheLimitAreCountedNotListed() {
        let many = (0..<3000).map { index in
            ResolutionDecision(
                point: String(format: "/key%05d", index), rule: "the latest change wins",
                kept: Self.value(Self.phone, String(repeating: "k", count: 150)),
                dropped: [Self.value(Self.laptop, String(repeating: "d", count: 150)), Self.value(Self.tablet, "t")])
        }
        let section = DecisionsSection(normalizing: many, for: Self.conflict)
        #expect(section.unlistedDecisions > 0 && section.decisions.count + section.unlistedDecisions == 3000)
        #expect(section.droppedValueCount == 6000)
        let lines = section.lines
        #expect(lines.reduce(0) { $0 + $1.utf8.count + 1 } < DecisionsSection.sectionLimit + 200)
        #expect(DecisionsSection.reading(Self.message(section)) == .section(section))
    }

    @Test func everyByteSurvivesTheEscapingAndNoneBreaksALine() {
        var random = SeededRandom(seed: 0x2727)
        var samples = (0...255).map { [UInt8($0)] }
        samples += (0..<500).map { _ in (0..<random.int(0...40)).map { _ in UInt8(truncatingIfNeeded: random.next()) } }
        samples += [Array("\u{202E}\u{2066}\u{FEFF}\u{E0041}\u{AD}".utf8), [0xED, 0xA0, 0x80], [0xC0, 0xAF], [0xF4, 0x90, 0x80, 0x80]]
        for bytes in samples {
            for quoted in [false, true] {
                let text = MessageEscaping.escaped(bytes, quoted: quoted)
                #expect(!text.utf8.contains { $0 < 0x20 || $0 == 0x7F }, "\(bytes)")
                #expect(!text.unicodeScalars.contains { (0x80...0x9F).contains($0.value) || (0x2028...0x202E).contains($0.value) })
                let back =
                    quoted
                    ? MessageEscaping.unquoted(ArraySlice(text.utf8)).flatMap { $0.rest.isEmpty ? $0.bytes : nil }
                    : MessageEscaping.unescaped(text.utf8)
                #expect(back == bytes, "\(bytes) → \(text)")
            }
        }
        // Invalid UTF-8 (a surrogate, an overlong form, past U+10FFFF) is written byte by byte.
        #expect(MessageEscaping.escaped([0xED, 0xA0, 0x80]) == #"\xED\xA0\x80"#)
        #expect(MessageEscaping.escaped(Array("é \u{202E}".utf8)) == #"é \xE2\x80\xAE"#)
        #expect(MessageEscaping.escaped(Array("ends in a space ".utf8)) == #"ends in a space\x20"#)
    }

    /// A resolution's trailers, read by git itself and by Truce's own reader (an older replica's reads every line).
    @Test func theTrailersStayWhatGitAndEveryTruceReaderRead() throws {
        let section = DecisionsSection(normalizing: Self.awkward, for: Self.conflict)
        let message = Self.message(section)
        let parsed = try #require(VersionMessage(parsing: message))
        var plain = parsed
        plain.decisions = DecisionsSection()
        #expect(parsed.key == Self.key.rawValue && parsed.resolvedBy == "last-writer-wins")
        // The place and the rule that hold "\nResolves: <id>" do not add a loser.
        #expect(parsed.resolves == [Self.laptop.id, Self.tablet.id])
        #expect(VersionMessage(parsing: plain.text) == plain)
        let trailers = try git(["interpret-trailers", "--parse"], input: Data(message.utf8))
        #expect(trailers.status == 0)
        #expect(
            trailers.output == """
                Document: settings.json
                Device: last-writer-wins
                Resolved-By: last-writer-wins
                Resolves: \(Self.laptop.id.hex)
                Resolves: \(Self.tablet.id.hex)

                """)
    }

    @Test func aRestoreTrailerReadsBack() throws {
        for point in [nil, "/theme", "", "/a \"b\"\n\u{202E}"] {
            let drop = RestoredDrop(resolution: Self.phone.id, version: Self.laptop.id, point: point)
            var message = VersionMessage(kind: .save, key: Self.key.rawValue, device: "me")
            message.restoresDropped = drop
            #expect(VersionMessage(parsing: message.text)?.restoresDropped == drop)
            let trailers = try git(["interpret-trailers", "--parse"], input: Data(message.text.utf8)).output
            #expect(trailers.hasSuffix("Restores-Dropped: \(drop.text)\n"), "\(trailers)")
        }
        #expect(RestoredDrop(parsing: "\(Self.phone.id.hex) \(Self.laptop.id.hex) \"/x\" trailing") == nil)
        #expect(RestoredDrop(parsing: "\(Self.phone.id.hex)") == nil)
    }

    /// What another replica may have written: each is reported, none trusted, none crashes the reader.
    @Test(arguments: [
        ("a value before any place", "    dropped \(laptop.id.hex) 2026-11-30T10:00:00Z \"laptop\" = 1"),
        ("an unknown escape", "  at \"/a\": r\n    dropped \(laptop.id.hex) 2026-11-30T10:00:00Z \"laptop\" = \\q"),
        ("a short id", "  at \"/a\": r\n    dropped b2b2 2026-11-30T10:00:00Z \"laptop\" = 1"),
        ("an id in capitals", "  at \"/a\": r\n    dropped \(laptop.id.hex.uppercased()) 2026-11-30T10:00:00Z \"laptop\" = 1"),
        ("a date with another zone", "  at \"/a\": r\n    dropped \(laptop.id.hex) 2026-11-30T10:00:00+01:00 \"laptop\" = 1"),
        ("February 30th", "  at \"/a\": r\n    dropped \(laptop.id.hex) 2026-02-30T10:00:00Z \"laptop\" = 1"),
        ("an unquoted device", "  at \"/a\": r\n    dropped \(laptop.id.hex) 2026-11-30T10:00:00Z laptop = 1"),
        ("a value on a whole-document decision", "  the whole document\n    dropped \(laptop.id.hex) 2026-11-30T10:00:00Z \"laptop\" = 1"),
        ("no value at a place", "  at \"/a\"\n    dropped \(laptop.id.hex) 2026-11-30T10:00:00Z \"laptop\""),
        ("a cut longer than its value", "  at \"/a\"\n    dropped \(laptop.id.hex) 2026-11-30T10:00:00Z \"laptop\" cut from 1 bytes = 12"),
        (
            "two kept values",
            "  at \"/a\"\n    kept \(phone.id.hex) 2026-11-30T10:00:00Z \"p\" = 1\n    kept \(phone.id.hex) 2026-11-30T10:00:00Z \"p\" = 2"
        ),
        ("a decision that keeps a value and drops none", "  at \"/a\"\n    kept \(phone.id.hex) 2026-11-30T10:00:00Z \"p\" = 1"),
        ("an unterminated place", "  at \"/a: r\n    dropped \(laptop.id.hex) 2026-11-30T10:00:00Z \"laptop\" = 1"),
        ("a line that is a trailer", "Resolves: \(stranger.id.hex)"),
        (
            "a count with text after it",
            "  at \"/a\"\n    dropped \(laptop.id.hex) 2026-11-30T10:00:00Z \"l\" = 1\n  and 1 more decisions, 1 dropped values, not listed\n  at \"/b\""
        ),
        ("a count of no decisions", "  and 0 more decisions, 0 dropped values, not listed"),
        ("nothing", ""),
    ])
    func aMalformedSectionIsReportedAndNothingOfItIsRead(what: String, lines: String) {
        let message = "Resolve settings.json\n\nDecisions:\n\(lines)\n\nDocument: settings.json\nDevice: x\nResolved-By: x\n"
        guard case .malformed(let reason) = DecisionsSection.reading(message) else {
            Issue.record("\(what): \(DecisionsSection.reading(message))")
            return
        }
        #expect(reason.hasPrefix("line ") || reason.hasPrefix("its "), "\(reason)")
    }

    @Test func messagesWithoutASectionHaveNone() {
        for message in [
            "Resolve a.md\n\nDocument: a.md\nDevice: three-way\nResolved-By: three-way\nResolves: \(Self.laptop.id.hex)\n",
            "Save a.md\n\nDocument: a.md\nDevice: laptop\n", "Resolve a.md", "", "Resolve a.md\nDecisions:\n",
            // The heading elsewhere than right after the title is not a section.
            "Resolve a.md\n\nDocument: a.md\n\nDecisions:\n  at \"/a\"\n",
        ] {
            #expect(DecisionsSection.reading(message) == DecisionsSection.Reading.none, "\(message)")
        }
    }

    /// Random damage to a valid section: the reader either reads a section or reports it, and never traps.
    @Test func damagedSectionsNeverTrapTheReader() {
        let message = Array(Self.message(DecisionsSection(normalizing: Self.awkward, for: Self.conflict)).utf8)
        var random = SeededRandom(seed: 0xDEC1)
        for _ in 0..<3000 {
            var damaged = message
            for _ in 0..<random.int(1...4) {
                let index = random.int(0..<damaged.count)
                switch random.int(0...2) {
                case 0: damaged[index] = UInt8(truncatingIfNeeded: random.next())
                case 1: damaged.remove(at: index)
                default: damaged.insert(random.pick(Array(" \"\\\n:=x0".utf8)), at: index)
                }
            }
            _ = DecisionsSection.reading(String(decoding: damaged, as: UTF8.self))
        }
    }
}
