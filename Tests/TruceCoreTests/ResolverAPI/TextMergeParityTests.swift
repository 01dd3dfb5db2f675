import Foundation
import TestSupport
import Testing
import TruceCore

/// TextMerge against the real `git merge-file`: same bytes, and a conflict count equal to git's exit status.
@Suite(.timeLimit(.minutes(20))) struct TextMergeParityTests {
    @Test func generatedTriplesMatchGitMergeFile() async throws {
        let triples = MergeTestTriple.generate(count: 260, seed: 0x7275_6365_2d6d_6572)
        let cases = triples.enumerated().flatMap { index, triple in
            TextMergeOptions.ConflictStyle.allCases.map { MergeTestCase(triple: triple, style: $0) } + [triple.variant(index)]
        }
        let directory = TemporaryDirectory("truce-textmerge")
        for (index, triple) in triples.enumerated() { try triple.write(to: directory.file("\(index)")) }

        let gitResults = try await concurrently(cases.indices, width: 4) { index in
            let testCase = cases[index]
            return try await gitWithoutUserConfig(testCase.gitArguments, in: directory.file("\(testCase.triple.index)"))
        }

        var mismatches: [String] = []
        for (index, testCase) in cases.enumerated() {
            let git = gitResults[index]
            let triple = testCase.triple
            guard let merged = try TextMerge.merge(base: triple.base, ours: triple.ours, theirs: triple.theirs, options: testCase.options) else {
                mismatches.append("\(testCase): TextMerge found the input binary")
                continue
            }
            if merged.content != git.stdout || merged.conflictCount != Int(git.status) {
                mismatches.append(
                    """
                    \(testCase): git exit \(git.status), TextMerge \(merged.conflictCount) conflicts
                    git:       \(git.stdout.escaped)
                    TextMerge: \(merged.content.escaped)
                    """)
            }
        }
        let differing = mismatches.count
        #expect(
            differing == 0, "\(differing) of \(cases.count) merges differ from git, for example:\n\(mismatches.prefix(5).joined(separator: "\n"))")

        // The generator must reach every path that matters, or the parity above proves less than it seems.
        let conflicted = cases.indices.filter { gitResults[$0].status > 0 }
        #expect(conflicted.count >= 150)
        #expect(cases.indices.contains { gitResults[$0].status > 1 })
        // Content lines that look like the markers drive the counting through its second merge.
        let markerLike = conflicted.filter { index in
            let triple = cases[index].triple
            let size = cases[index].options.markerSize
            return [triple.base, triple.ours, triple.theirs].contains { mergeTestLongestMarkerRun($0) >= size }
        }
        #expect(markerLike.count >= 30)
        #expect(triples.contains { $0.base.isEmpty } && triples.contains { $0.ours.isEmpty } && triples.contains { $0.theirs.isEmpty })
        #expect(triples.contains { $0.ours.last != UInt8(ascii: "\n") && !$0.ours.isEmpty })
        #expect(triples.contains { $0.base.contains(UInt8(ascii: "\r")) })
    }

    @Test func labelsHoldingNewlinesStillCountEveryConflict() async throws {
        let triple = MergeTestTriple(
            index: 0, scenario: "labels",
            base: Data("a\nb\nc\nd\ne\nf\ng\nh\n".utf8),
            ours: Data("a\nB1\nc\nd\ne\nf\nG1\nh\n".utf8),
            theirs: Data("a\nB2\nc\nd\ne\nf\nG2\nh\n".utf8))
        let directory = TemporaryDirectory("truce-textmerge")
        try triple.write(to: directory.path)
        for style in TextMergeOptions.ConflictStyle.allCases {
            let labels = ["one\n<<<<<<< two", "base\nline", "other\n"]
            var arguments = ["merge-file", "-p"] + (style == .merge ? [] : ["--\(style.rawValue)"])
            arguments += labels.flatMap { ["-L", $0] } + ["ours", "base", "theirs"]
            let git = try await gitWithoutUserConfig(arguments, in: directory.path)
            let options = TextMergeOptions(style: style, oursLabel: labels[0], baseLabel: labels[1], theirsLabel: labels[2])
            let merged = try #require(try TextMerge.merge(base: triple.base, ours: triple.ours, theirs: triple.theirs, options: options))
            #expect(merged.content == git.stdout)
            #expect(merged.conflictCount == 2)
            #expect(git.status == 2)
        }
    }

    @Test func nulBytesInTheFirst8000BytesMakeTheInputBinary() async throws {
        let text = Data("a\nb\nc\n".utf8)
        let binary = Data("a\n\u{0}b\nc\n".utf8)
        for favor in TextMergeOptions.MergeFavor.allCases {
            let options = TextMergeOptions(favor: favor)
            #expect(try TextMerge.merge(base: binary, ours: text, theirs: text, options: options) == nil)
            #expect(try TextMerge.merge(base: text, ours: binary, theirs: text, options: options) == nil)
            #expect(try TextMerge.merge(base: text, ours: text, theirs: binary, options: options) == nil)
        }
        #expect(TextMerge.isBinary(binary))
        #expect(!TextMerge.isBinary(text))

        // git looks at the first 8000 bytes only: a later NUL still merges as text, the same way in both.
        let padding = String(repeating: "padding line\n", count: 700)
        let late = MergeTestTriple(
            index: 0, scenario: "late NUL",
            base: Data((padding + "x\n\u{0}\ny\n").utf8),
            ours: Data((padding + "x1\n\u{0}\ny\n").utf8),
            theirs: Data((padding + "x2\n\u{0}\ny\n").utf8))
        #expect(!TextMerge.isBinary(late.base))
        let directory = TemporaryDirectory("truce-textmerge")
        try late.write(to: directory.path)
        let git = try await gitWithoutUserConfig(MergeTestCase(triple: late, style: .merge).gitArguments, in: directory.path)
        let merged = try #require(
            try TextMerge.merge(
                base: late.base, ours: late.ours, theirs: late.theirs,
                options: MergeTestCase(triple: late, style: .merge).options))
        #expect(git.status == 1)
        #expect(merged.content == git.stdout)
        #expect(merged.conflictCount == 1)
    }

    @Test func markerSizeAboveLibgit2sLimitIsBadInput() {
        let error = #expect(throws: TruceError.self) {
            try TextMerge.merge(base: Data(), ours: Data(), theirs: Data(), options: TextMergeOptions(markerSize: 70_000))
        }
        #expect(error == .invalidConfiguration("conflict marker size 70000 is above 65535"))
        #expect(error?.isBadInput == true)
    }
}

// MARK: - Cases

/// One (base, ours, theirs) triple of the parity run.
private struct MergeTestTriple: Sendable {
    let index: Int
    let scenario: String
    let base: Data
    let ours: Data
    let theirs: Data

    func write(to directory: String) throws {
        try writeMergeInputs(base: base, ours: ours, theirs: theirs, to: directory)
    }

    /// A fourth run per triple with a favor or an unusual marker size, rotating through them.
    func variant(_ index: Int) -> MergeTestCase {
        let style = TextMergeOptions.ConflictStyle.allCases[index % 3]
        switch index % 6 {
        case 0: return MergeTestCase(triple: self, style: style, favor: .ours)
        case 1: return MergeTestCase(triple: self, style: style, favor: .theirs)
        case 2: return MergeTestCase(triple: self, style: style, favor: .union)
        case 3: return MergeTestCase(triple: self, style: style, markerSize: 3)
        case 4: return MergeTestCase(triple: self, style: style, markerSize: 8)
        default: return MergeTestCase(triple: self, style: style, markerSize: 1)
        }
    }

    /// `count` triples from a fixed seed: the same every run, on every machine.
    static func generate(count: Int, seed: UInt64) -> [MergeTestTriple] {
        var random = SeededRandom(seed: seed)
        return (0..<count).map { index in
            let scenario = MergeTestScenario.allCases[index % MergeTestScenario.allCases.count]
            return scenario.make(index: index, random: &random)
        }
    }
}

/// One `git merge-file` invocation and the TextMerge options that must give the same answer.
private struct MergeTestCase: Sendable, CustomStringConvertible {
    let triple: MergeTestTriple
    let style: TextMergeOptions.ConflictStyle
    var favor: TextMergeOptions.MergeFavor = .normal
    var markerSize = 7

    var options: TextMergeOptions {
        TextMergeOptions(style: style, favor: favor, markerSize: markerSize, oursLabel: "current", baseLabel: "base", theirsLabel: "other")
    }

    var gitArguments: [String] {
        var arguments = ["merge-file", "-p"]
        if style != .merge { arguments.append("--\(style.rawValue)") }
        if favor != .normal { arguments.append("--\(favor.rawValue)") }
        if markerSize != 7 { arguments.append("--marker-size=\(markerSize)") }
        return arguments + ["-L", "current", "-L", "base", "-L", "other", "ours", "base", "theirs"]
    }

    var description: String {
        "triple \(triple.index) (\(triple.scenario)) style \(style.rawValue) favor \(favor.rawValue) marker size \(markerSize)"
    }
}

/// The shapes of edit the generator makes, taken in turn.
private enum MergeTestScenario: String, CaseIterable {
    case random, atStart, atEnd, adjacent, deletions, insertions, noFinalNewline, crlf, empty, identical,
        markerLikeContent, sharedEnds, punctuationBetween

    func make(index: Int, random: inout SeededRandom) -> MergeTestTriple {
        var base = MergeTestLines.base(random: &random, markerLike: self == .markerLikeContent)
        var ours = base, theirs = base
        var eol = MergeTestLineEnding.lf
        var finalNewline = (true, true, true)
        switch self {
        case .random:
            for _ in 0..<random.int(1...3) { ours.edit(anywhere: &random, side: "ours") }
            for _ in 0..<random.int(1...3) { theirs.edit(anywhere: &random, side: "theirs") }
        case .atStart:
            ours.edit(at: 0, random: &random, side: "ours")
            theirs.edit(at: random.int(0...1), random: &random, side: "theirs")
        case .atEnd:
            ours.edit(at: ours.count, random: &random, side: "ours")
            theirs.edit(at: max(0, theirs.count - random.int(0...1)), random: &random, side: "theirs")
        case .adjacent:
            let line = random.int(0...max(0, base.count - 2))
            ours.replace(line, with: ["ours \(index)"])
            theirs.replace(line + 1, with: ["theirs \(index)"])
            if random.chance(50) { swap(&ours, &theirs) }
        case .deletions:
            let line = random.int(0...max(0, base.count - 1))
            ours.delete(from: line, count: random.int(1...3))
            if random.chance(50) {
                theirs.replace(line + random.int(0...2), with: ["theirs \(index)"])
            } else {
                theirs.delete(from: max(0, line - 1), count: random.int(1...3))
            }
        case .insertions:
            let line = random.int(0...base.count)
            ours.insert(["ours \(index)", "shared"], at: line)
            theirs.insert(random.chance(50) ? ["theirs \(index)"] : ["shared", "theirs \(index)"], at: line + random.int(0...1))
        case .noFinalNewline:
            ours.edit(at: ours.count - random.int(0...1), random: &random, side: "ours")
            theirs.edit(anywhere: &random, side: "theirs")
            finalNewline = (random.chance(50), random.chance(50), random.chance(50))
            if finalNewline == (true, true, true) { finalNewline.1 = false }
        case .crlf:
            eol = random.chance(70) ? .crlf : .mixed
            ours.edit(anywhere: &random, side: "ours")
            theirs.edit(anywhere: &random, side: "theirs")
        case .empty:
            ours.edit(anywhere: &random, side: "ours")
            theirs.edit(anywhere: &random, side: "theirs")
            switch index / MergeTestScenario.allCases.count % 5 {
            case 0: base = []
            case 1: ours = []
            case 2: theirs = []
            case 3: (base, ours) = ([], [])
            default: (ours, theirs) = ([], [])
            }
        case .identical:
            let line = random.int(0...base.count)
            let edit = ["same \(index)", "both"]
            ours.insert(edit, at: line)
            theirs.insert(edit, at: line)
            if random.chance(50) { theirs.edit(anywhere: &random, side: "theirs") }
        case .markerLikeContent:
            for _ in 0..<random.int(1...2) { ours.edit(anywhere: &random, side: "ours", markerLike: true) }
            for _ in 0..<random.int(1...2) { theirs.edit(anywhere: &random, side: "theirs", markerLike: true) }
        case .sharedEnds:
            let line = random.int(0...max(0, base.count - 1))
            let head = ["common head \(index)"], tail = random.chance(50) ? ["common tail"] : []
            ours.replace(line, with: head + ["ours \(index)"] + tail)
            theirs.replace(line, with: head + ["theirs \(index)", "more"] + tail)
        case .punctuationBetween:
            // git merge-file joins conflicts that only lines without a letter or digit separate; git merge does not.
            let line = random.int(0...base.count)
            let gap = (0..<random.int(2...6)).map { _ in random.pick(MergeTestLines.punctuation) }
            base.insert(["before \(index)"] + gap + ["after \(index)"], at: line)
            (ours, theirs) = (base, base)
            ours.replace(line, with: ["ours before \(index)"])
            theirs.replace(line, with: ["theirs before \(index)"])
            ours.replace(line + gap.count + 1, with: ["ours after \(index)"])
            theirs.replace(line + gap.count + 1, with: random.chance(80) ? ["theirs after \(index)"] : [])
        }
        let render = { (lines: [String], final: Bool, random: inout SeededRandom) in
            MergeTestLines.render(lines, eol: eol, finalNewline: final, random: &random)
        }
        return MergeTestTriple(
            index: index, scenario: rawValue,
            base: render(base, finalNewline.0, &random),
            ours: render(ours, finalNewline.1, &random),
            theirs: render(theirs, finalNewline.2, &random))
    }
}

private enum MergeTestLineEnding { case lf, crlf, mixed }

private enum MergeTestLines {
    static let markerLike = ["<<<<<<< current", "=======", ">>>>>>> other", "<<<<<<<", "||||||| base", "<<<<<<<<<< long", "<<< short", "<<<<<<< "]
    static let punctuation = ["}", "", "--", "  ", "};", "*/"]

    /// A base of 0 to 24 lines: mostly distinct, with repeated punctuation lines to give the diff some choices.
    static func base(random: inout SeededRandom, markerLike: Bool) -> [String] {
        (0..<random.int(0...24)).map { line in
            if random.chance(markerLike ? 25 : 3) { return random.pick(Self.markerLike) }
            if random.chance(20) { return random.pick(punctuation) }
            return "line \(line) \(random.pick(["alpha", "beta", "gamma", "delta"]))"
        }
    }

    static func render(_ lines: [String], eol: MergeTestLineEnding, finalNewline: Bool, random: inout SeededRandom) -> Data {
        var text = ""
        for (index, line) in lines.enumerated() {
            text += line
            if index == lines.count - 1 && !finalNewline { break }
            switch eol {
            case .lf: text += "\n"
            case .crlf: text += "\r\n"
            case .mixed: text += random.chance(50) ? "\r\n" : "\n"
            }
        }
        return Data(text.utf8)
    }
}

extension [String] {
    /// Replaces, inserts or deletes a few lines somewhere.
    fileprivate mutating func edit(anywhere random: inout SeededRandom, side: String, markerLike: Bool = false) {
        edit(at: random.int(0...count), random: &random, side: side, markerLike: markerLike)
    }

    /// Replaces, inserts or deletes a few lines at `line` (clamped).
    fileprivate mutating func edit(at line: Int, random: inout SeededRandom, side: String, markerLike: Bool = false) {
        let new = (0..<random.int(1...3)).map { number in
            markerLike && random.chance(60) ? random.pick(MergeTestLines.markerLike) : "\(side) edit \(random.int(0...999)) \(number)"
        }
        switch random.int(0...2) {
        case 0: replace(line, with: new)
        case 1: insert(new, at: line)
        default: delete(from: line, count: random.int(1...2))
        }
    }

    fileprivate mutating func replace(_ line: Int, with lines: [String]) {
        let start = Swift.min(Swift.max(0, line), count)
        replaceSubrange(start..<Swift.min(start + 1, count), with: lines)
    }

    fileprivate mutating func insert(_ lines: [String], at line: Int) {
        insert(contentsOf: lines, at: Swift.min(Swift.max(0, line), count))
    }

    fileprivate mutating func delete(from line: Int, count deleted: Int) {
        let start = Swift.min(Swift.max(0, line), count)
        removeSubrange(start..<Swift.min(start + deleted, count))
    }
}

// MARK: - Helpers

/// The longest run of '<' that starts a line.
private func mergeTestLongestMarkerRun(_ data: Data) -> Int {
    data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        .map { line in line.prefix { $0 == UInt8(ascii: "<") }.count }.max() ?? 0
}
