import Foundation
import TestSupport
import Testing

@testable import TruceCore

/// `TextMerge.mergeFiles` split into many regions against the real `git merge-file -p` on the whole files.
@Suite(.timeLimit(.minutes(20))) struct RegionMergeParityTests {
    /// Regions of about 1.5 KB, so a triple of a few hundred lines is cut a dozen times.
    private static let small = RegionSplitting(minimumBytes: 4 << 10, regionBytes: 1536)

    @Test func splitMergesMatchGitMergeFileOnTheWholeFiles() async throws {
        var random = SeededRandom(seed: 0x7265_6769_6f6e)
        let triples = (0..<150).map { RegionTriple.make(index: $0, random: &random) }
        let cases = triples.flatMap { triple in RegionCase.options(for: triple.index).map { RegionCase(triple: triple, options: $0) } }
        let directory = TemporaryDirectory("truce-region-merge")
        for triple in triples {
            try writeMergeInputs(base: triple.base, ours: triple.ours, theirs: triple.theirs, to: directory.file("\(triple.index)"))
        }

        let gitResults = try await concurrently(cases.indices, width: 4) { index in
            try await gitWithoutUserConfig(cases[index].gitArguments, in: directory.file("\(cases[index].triple.index)"))
        }

        var mismatches: [String] = []
        var split: Set<Int> = []
        var conflictsNearCuts = 0
        for (index, testCase) in cases.enumerated() {
            let git = gitResults[index]
            let folder = directory.file("\(testCase.triple.index)")
            let cuts = try Self.cuts(in: folder, options: testCase.options)
            if let cuts, cuts.count >= 4 { split.insert(testCase.triple.index) }
            var merged = Data()
            let conflicts = try Self.withInputs(in: folder) { base, ours, theirs in
                try TextMerge.mergeFiles(base: base, ours: ours, theirs: theirs, options: testCase.options, splitting: Self.small) {
                    merged.append($0)
                }
            }
            #expect(git.stderr.isEmpty, "\(testCase): \(git.errorOutput)")
            if merged != git.stdout || conflicts.map({ min($0, 127) }) != Int(git.status) {
                mismatches.append(
                    """
                    \(testCase) (\(cuts.map { "\($0.count - 1) regions" } ?? "whole")): git exit \(git.status), \
                    ours \(conflicts.map(String.init) ?? "binary")
                    git:  \(git.stdout.escaped.prefix(3000))
                    ours: \(merged.escaped.prefix(3000))
                    """)
            }
            if let cuts, git.status > 0 {
                conflictsNearCuts += Self.conflictsNearAnchors(output: git.stdout, base: testCase.triple.base, cuts: cuts)
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) of \(cases.count) differ from git:\n\(mismatches.prefix(3).joined(separator: "\n"))")

        // The split path must be what ran, on every shape, or the parity above says nothing about it.
        // (The rest fall back: a line put back nearby, a gap with two longest alignments, a move.)
        #expect(split.count >= triples.count * 2 / 5, "only \(split.count) of \(triples.count) triples were split")
        for scenario in RegionScenario.allCases where scenario != .moved {
            #expect(triples.contains { $0.scenario == scenario && split.contains($0.index) }, "no \(scenario) triple was split")
        }
        #expect(cases.indices.filter { gitResults[$0].status > 0 && split.contains(cases[$0].triple.index) }.count >= 100)
        #expect(conflictsNearCuts >= 20, "only \(conflictsNearCuts) conflicts within 8 lines of a cut")
    }

    @Test func filesAboveTheRealThresholdAreSplitAndMatchGit() async throws {
        var random = SeededRandom(seed: 9)
        let triple = RegionTriple.large(bytes: 9 << 20, random: &random)
        let directory = TemporaryDirectory("truce-region-large")
        try writeMergeInputs(base: triple.base, ours: triple.ours, theirs: triple.theirs, to: directory.path)
        let git = try await gitWithoutUserConfig(["merge-file", "-p", "ours", "base", "theirs"], in: directory.path)
        let cuts = try #require(try Self.cuts(in: directory.path, options: .init(), splitting: .standard))
        #expect(cuts.count >= 3)
        var merged = Data()
        let conflicts = try Self.withInputs(in: directory.path) { base, ours, theirs in
            try TextMerge.mergeFiles(base: base, ours: ours, theirs: theirs) { merged.append($0) }
        }
        #expect(git.status > 0)
        #expect(conflicts.map { min($0, 127) } == Int(git.status))
        #expect(merged == git.stdout)
    }

    @Test func smallOrUnanchoredInputsAreMergedWhole() throws {
        let directory = TemporaryDirectory("truce-region-whole")
        let lines = (0..<400).map { "line \($0) of the document\n" }.joined()
        try writeMergeInputs(base: Data(lines.utf8), ours: Data(lines.utf8), theirs: Data(lines.utf8), to: directory.file("small"))
        #expect(try Self.cuts(in: directory.file("small"), options: .init(), splitting: .standard) == nil)
        #expect(try Self.cuts(in: directory.file("small"), options: .init()) != nil)
        #expect(try Self.cuts(in: directory.file("small"), options: .init(diffAlgorithm: .patience)) == nil)
        // No line is unique: nothing to anchor on.
        let repeated = Data(String(repeating: "same\n", count: 2000).utf8)
        try writeMergeInputs(base: repeated, ours: repeated, theirs: repeated, to: directory.file("repeated"))
        #expect(try Self.cuts(in: directory.file("repeated"), options: .init()) == nil)
        // A NUL byte after the first 8000 bytes: git merges the file as text, whole.
        var nul = Data(lines.utf8)
        nul[9000] = 0
        try writeMergeInputs(base: nul, ours: Data(lines.utf8), theirs: Data(lines.utf8), to: directory.file("nul"))
        #expect(try Self.cuts(in: directory.file("nul"), options: .init()) == nil)
    }

    // MARK: - Helpers

    private static func withInputs<R>(in folder: String, _ body: (FileHandle, FileHandle, FileHandle) throws -> R) throws -> R {
        let handles = try ["base", "ours", "theirs"].map { try #require(FileHandle(forReadingAtPath: folder + "/" + $0)) }
        return try body(handles[0], handles[1], handles[2])
    }

    private static func cuts(in folder: String, options: TextMergeOptions, splitting: RegionSplitting = small) throws -> [[Int]]? {
        try withInputs(in: folder) { base, ours, theirs in
            try RegionPlan.cuts([base.fileDescriptor, ours.fileDescriptor, theirs.fileDescriptor], options: options, splitting: splitting)
        }
    }

    /// How many interior cuts have a conflict marker within 8 lines of their anchor in git's output.
    private static func conflictsNearAnchors(output: Data, base: Data, cuts: [[Int]]) -> Int {
        let lines = output.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { Data($0) }
        var near = 0
        for cut in cuts.dropFirst().dropLast() {
            let anchor = Data(base[cut[0]...].prefix { $0 != UInt8(ascii: "\n") })
            guard let position = lines.firstIndex(of: anchor) else { continue }
            let window = lines[max(0, position - 8)..<min(lines.count, position + 9)]
            if window.contains(where: { $0.starts(with: Data("<<<<<<<".utf8)) || $0.starts(with: Data(">>>>>>>".utf8)) }) { near += 1 }
        }
        return near
    }
}

/// The shapes of triple, taken in turn.
private enum RegionScenario: String, CaseIterable {
    case scattered, dense, crlf, mixedEndings, noFinalNewline, punctuation, markerLike, moved
}

/// A triple of a few hundred lines: unique lines to anchor on, blank and punctuation lines, edits all through it.
private struct RegionTriple: Sendable {
    let index: Int
    let scenario: RegionScenario
    let base: Data
    let ours: Data
    let theirs: Data

    static let words = ["note", "merge", "draft", "list", "item", "fix", "call", "review", "text", "save", "base", "head"]

    static func line(_ random: inout SeededRandom, unique: Int? = nil, punctuation: Bool = false, markerLike: Bool = false) -> String {
        if markerLike && random.chance(8) { return random.pick(["<<<<<<< not a marker", "=======", ">>>>>>> nor this", "|||||||"]) }
        if random.chance(punctuation ? 30 : 12) { return random.pick(["", "", "}", "---", "  ", "{", "*"]) }
        let text = (0..<random.int(1...4)).map { _ in random.pick(words) }.joined(separator: " ")
        return unique.map { "\(text) \($0)" } ?? text
    }

    static func make(index: Int, random: inout SeededRandom) -> RegionTriple {
        let scenario = RegionScenario.allCases[index % RegionScenario.allCases.count]
        let punctuation = scenario == .punctuation, markerLike = scenario == .markerLike
        var counter = 0
        func fresh(_ random: inout SeededRandom, side: String) -> String {
            counter += 1
            // Edits bring new lines, and now and then one the base already has.
            return random.chance(20) ? line(&random, punctuation: punctuation) : "\(side) " + line(&random, unique: counter)
        }
        let base = (0..<random.int(300...600)).map { index in
            line(&random, unique: random.chance(70) ? index : nil, punctuation: punctuation, markerLike: markerLike)
        }
        var ours = base, theirs = base
        let editCount = base.count / (scenario == .dense ? 6 : 14)
        for _ in 0..<editCount {
            let at = random.int(0...base.count - 1)
            // One edit in three lands where the other side edits too: a conflict or a shared change.
            let sides = random.chance(33) ? [0, 1] : [random.int(0...1)]
            for side in sides {
                if side == 0 {
                    edit(&ours, near: at, random: &random) { fresh(&$0, side: "ours") }
                } else {
                    edit(&theirs, near: at, random: &random) { fresh(&$0, side: "theirs") }
                }
            }
        }
        if scenario == .moved {
            let start = random.int(0...ours.count - 10)
            let block = Array(ours[start..<start + 6])
            ours.removeSubrange(start..<start + 6)
            ours.insert(contentsOf: block, at: random.int(0...ours.count))
        }
        func render(_ lines: [String], finalNewline: Bool) -> Data {
            var text = ""
            for line in lines {
                // A line keeps its ending in every file, as in a file edited with mixed endings.
                let crlf = scenario == .crlf || (scenario == .mixedEndings && line.unicodeScalars.reduce(0) { $0 + $1.value } % 3 == 0)
                text += line + (crlf ? "\r\n" : "\n")
            }
            if !finalNewline, text.hasSuffix("\n") { text.removeLast() }
            return Data(text.utf8)
        }
        let cut = scenario == .noFinalNewline
        return RegionTriple(
            index: index, scenario: scenario, base: render(base, finalNewline: !cut || random.chance(50)),
            ours: render(ours, finalNewline: !cut || random.chance(50)), theirs: render(theirs, finalNewline: !cut || random.chance(50)))
    }

    /// Replaces, inserts or deletes one to three lines at about `at`.
    private static func edit(_ lines: inout [String], near at: Int, random: inout SeededRandom, fresh: (inout SeededRandom) -> String) {
        let at = min(lines.count, max(0, at + random.int(-1...1)))
        let count = random.int(1...3)
        switch random.int(0...2) {
        case 0:
            let end = min(lines.count, at + count)
            lines.replaceSubrange(at..<end, with: (0..<count).map { _ in fresh(&random) })
        case 1: lines.insert(contentsOf: (0..<count).map { _ in fresh(&random) }, at: at)
        default: lines.removeSubrange(at..<min(lines.count, at + count))
        }
    }

    /// About `bytes` of numbered lines with a conflict every few thousand lines, for the library's own thresholds.
    static func large(bytes: Int, random: inout SeededRandom) -> RegionTriple {
        var base: [String] = []
        var size = 0
        while size < bytes {
            let text = line(&random, unique: base.count) + "\n"
            base.append(text)
            size += text.utf8.count
        }
        var ours = base, theirs = base
        for at in stride(from: 100, to: base.count - 10, by: 3000) {
            ours[at] = "ours \(at)\n"
            theirs[at + random.int(0...1)] = "theirs \(at)\n"
            ours[at + 40] = "ours only \(at)\n"
        }
        return RegionTriple(
            index: 0, scenario: .scattered, base: Data(base.joined().utf8), ours: Data(ours.joined().utf8), theirs: Data(theirs.joined().utf8))
    }
}

/// One `git merge-file` run and the options that must give the same answer.
private struct RegionCase: Sendable, CustomStringConvertible {
    let triple: RegionTriple
    let options: TextMergeOptions

    /// Three runs per triple: the default, a base-showing style, and a favor or marker size, rotating.
    static func options(for index: Int) -> [TextMergeOptions] {
        let labels = (oursLabel: "current", baseLabel: "base", theirsLabel: "other")
        func make(_ style: TextMergeOptions.ConflictStyle, _ favor: TextMergeOptions.MergeFavor = .normal, marker: Int = 7) -> TextMergeOptions {
            TextMergeOptions(
                style: style, favor: favor, markerSize: marker, oursLabel: labels.oursLabel, baseLabel: labels.baseLabel,
                theirsLabel: labels.theirsLabel)
        }
        let variants = [make(.merge, .ours), make(.diff3, .theirs), make(.zdiff3, .union), make(.merge, marker: 3), make(.diff3, marker: 9)]
        return [make(.merge), make(index % 2 == 0 ? .diff3 : .zdiff3), variants[index % variants.count]]
    }

    var gitArguments: [String] {
        var arguments = ["merge-file", "-p"]
        if options.style != .merge { arguments.append("--\(options.style.rawValue)") }
        if options.favor != .normal { arguments.append("--\(options.favor.rawValue)") }
        if options.markerSize != 7 { arguments.append("--marker-size=\(options.markerSize)") }
        return arguments + ["-L", options.oursLabel, "-L", options.baseLabel, "-L", options.theirsLabel, "ours", "base", "theirs"]
    }

    var description: String {
        "triple \(triple.index) (\(triple.scenario)) style \(options.style) favor \(options.favor) marker \(options.markerSize)"
    }
}
