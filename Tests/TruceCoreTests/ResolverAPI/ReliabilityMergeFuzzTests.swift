import Foundation
import TestSupport
import Testing
import TruceCore

/// Random (base, ours, theirs) triples merged by `TextMerge` and by `git merge-file -p`: the same bytes and conflict counts.
///
/// Unlike `TextMergeParityTests`, whose scenarios aim at known corners, this
/// draws everything at random: lines from a small pool (so the diff has
/// choices to make), marker-like lines, random replacements, insertions,
/// deletions and moves on each side (sometimes the same edit on both), LF,
/// CRLF, mixed or bare-CR line ends, missing final newlines, and NUL bytes.
/// A NUL in the first 8000 bytes makes an input binary: git then prints
/// nothing and exits 255 with "Cannot merge binary files", `TextMerge`
/// returns nil and `truce merge-file` prints git's line and exits 255. A NUL
/// further on is text to both. `truce merge-file` itself runs on every binary
/// case and on a sample of the others. 2,000 cases in CI, 20,000 with `HEAVY=1`;
/// `RELIABILITY_SEED` picks another seed.
@Suite(.timeLimit(.minutes(20))) struct ReliabilityMergeFuzzTests {
    @Test func randomTriplesMergeLikeGitMergeFile() async throws {
        let environment = ProcessInfo.processInfo.environment
        let heavy = environment["HEAVY"] == "1"
        let count = heavy ? 20_000 : 2_000
        let seed =
            environment["RELIABILITY_SEED"].flatMap { $0.hasPrefix("0x") ? UInt64($0.dropFirst(2), radix: 16) : UInt64($0) }
            ?? 0x6D65_7267_6566_757A
        print("reliability: merge fuzz seed \(seed) (replay with RELIABILITY_SEED=\(seed))\(heavy ? " HEAVY" : "")")
        var random = SeededRandom(seed: seed)
        let cases = (0..<count).map { FuzzCase.make(index: $0, random: &random) }
        let directory = TemporaryDirectory("truce-merge-fuzz")
        for fuzz in cases { try fuzz.write(to: directory.file("\(fuzz.index)")) }

        let gitResults = try await concurrently(cases.indices, width: 4) { index in
            try await gitWithoutUserConfig(
                ["merge-file", "-p"] + cases[index].optionArguments + ["ours", "base", "theirs"],
                in: directory.file("\(index)"))
        }

        var mismatches: [String] = []
        var binary = 0, conflicted = 0, clean = 0
        for fuzz in cases {
            let git = gitResults[fuzz.index]
            let merged = try TextMerge.merge(base: fuzz.base, ours: fuzz.ours, theirs: fuzz.theirs, options: fuzz.options)
            guard let merged else {
                binary += 1
                if git.status != 255 || !git.stdout.isEmpty || !git.errorOutput.contains("Cannot merge binary files") {
                    mismatches.append("\(fuzz): TextMerge found it binary, git exited \(git.status): \(git.errorOutput)")
                }
                continue
            }
            if merged.conflictCount > 0 { conflicted += 1 } else { clean += 1 }
            if merged.content != git.stdout || min(merged.conflictCount, 127) != Int(git.status) {
                mismatches.append(
                    """
                    \(fuzz): git exit \(git.status), TextMerge \(merged.conflictCount) conflicts
                      base:      \(fuzz.base.escaped)
                      ours:      \(fuzz.ours.escaped)
                      theirs:    \(fuzz.theirs.escaped)
                      git:       \(git.stdout.escaped)
                      TextMerge: \(merged.content.escaped)
                    """)
            }
        }
        #expect(
            mismatches.isEmpty,
            "\(mismatches.count) of \(count) merges differ from git (seed \(seed)):\n\(mismatches.prefix(5).joined(separator: "\n"))")

        // The command line on every binary case and on a sample of the rest: git's output, messages and exit status.
        let sample = cases.filter { gitResults[$0.index].status == 255 || $0.index % 40 == 0 }
        let cliResults = try await concurrently(sample.indices, width: 2) { index in
            try await runAsync(
                truceExecutable, ["merge-file", "-p"] + sample[index].optionArguments + ["ours", "base", "theirs"],
                directory: directory.file("\(sample[index].index)"))
        }
        var cliMismatches: [String] = []
        for (fuzz, truce) in zip(sample, cliResults) {
            let git = gitResults[fuzz.index]
            if git.status == 255 {
                if truce.status != 255 || truce.errorOutput != git.errorOutput || !truce.stdout.isEmpty {
                    cliMismatches.append(
                        "\(fuzz): binary input, truce exited \(truce.status) with stderr \(truce.errorOutput.debugDescription), git \(git.errorOutput.debugDescription)"
                    )
                }
            } else if truce.stdout != git.stdout || truce.status != git.status || !truce.stderr.isEmpty {
                cliMismatches.append(
                    "\(fuzz): truce merge-file exited \(truce.status), git \(git.status); stderr \(truce.errorOutput.debugDescription)")
            }
        }
        #expect(cliMismatches.isEmpty, "truce merge-file differs from git (seed \(seed)):\n\(cliMismatches.prefix(5).joined(separator: "\n"))")

        // The generator must reach every kind of input, or the parity above proves less than it seems.
        #expect(binary >= count / 40, "only \(binary) binary cases")
        #expect(conflicted >= count / 5, "only \(conflicted) conflicted merges")
        #expect(clean >= count / 5, "only \(clean) clean merges")
        #expect(cases.contains { $0.lateNUL && gitResults[$0.index].status != 255 }, "no NUL past 8000 bytes merged as text")
        #expect(cases.contains { $0.ours.contains(UInt8(ascii: "\r")) && gitResults[$0.index].status > 0 && gitResults[$0.index].status < 255 })
        #expect(cases.contains { $0.ours.last != UInt8(ascii: "\n") && !$0.ours.isEmpty && gitResults[$0.index].status > 0 })
        print(
            "reliability: merge fuzz \(count) cases: \(clean) clean, \(conflicted) conflicted, \(binary) binary, \(sample.count) through truce merge-file"
        )
    }
}

/// One random triple and the `git merge-file` options to merge it with.
private struct FuzzCase: Sendable, CustomStringConvertible {
    let index: Int
    let base: Data
    let ours: Data
    let theirs: Data
    let style: TextMergeOptions.ConflictStyle
    let favor: TextMergeOptions.MergeFavor
    let markerSize: Int
    /// True when a NUL was put past git's 8000-byte binary check: text to both.
    let lateNUL: Bool

    var options: TextMergeOptions {
        TextMergeOptions(style: style, favor: favor, markerSize: markerSize, oursLabel: "ours", baseLabel: "base", theirsLabel: "theirs")
    }

    /// The options as `git merge-file` and `truce merge-file` both take them; labels default to the file names.
    var optionArguments: [String] {
        var arguments: [String] = []
        if style != .merge { arguments.append("--\(style.rawValue)") }
        if favor != .normal { arguments.append("--\(favor.rawValue)") }
        if markerSize != 7 { arguments.append("--marker-size=\(markerSize)") }
        return arguments
    }

    var description: String { "case \(index) (\(optionArguments.joined(separator: " ")))" }

    func write(to directory: String) throws {
        try writeMergeInputs(base: base, ours: ours, theirs: theirs, to: directory)
    }

    static let pool = [
        "a", "b", "c", "x = 1", "x = 2", "return x", "{", "}", "", " ", "\t", "// note", "<<<<<<< ours", "=======",
        ">>>>>>> theirs", "||||||| base", "<<<<<<<", "éè ü", "end",
    ]

    static func make(index: Int, random: inout SeededRandom) -> FuzzCase {
        let base = (0..<random.int(0...30)).map { _ in line(&random, side: "base") }
        var ours = base, theirs = base
        for _ in 0..<random.int(0...4) { edit(&ours, &random, side: "ours") }
        for _ in 0..<random.int(0...4) { edit(&theirs, &random, side: "theirs") }
        if random.chance(15) {
            // The same change on both sides, which git takes once.
            let shared = (0..<random.int(1...3)).map { _ in line(&random, side: "both") }
            let at = random.int(0...base.count)
            ours.insert(contentsOf: shared, at: min(at, ours.count))
            theirs.insert(contentsOf: shared, at: min(at, theirs.count))
        }
        var files = [base, ours, theirs].map { render($0, &random) }
        var lateNUL = false
        if random.chance(6) {
            // A NUL where git's binary check looks: the whole merge is refused.
            let file = random.int(0...2)
            files[file].insert(0, at: random.int(0...files[file].count))
        } else if random.chance(2) {
            // A NUL past the first 8000 bytes, in a block every side shares: still text.
            let padding = Data(String(repeating: "padding line\n", count: 640).utf8) + Data([0x6E, 0x75, 0x6C, 0x00, 0x0A])
            files = files.map { padding + $0 }
            lateNUL = true
        }
        let style = random.pick(TextMergeOptions.ConflictStyle.allCases)
        let favor: TextMergeOptions.MergeFavor = random.chance(85) ? .normal : random.pick([.ours, .theirs, .union])
        let markerSize = random.chance(85) ? 7 : random.int(1...12)
        return FuzzCase(
            index: index, base: files[0], ours: files[1], theirs: files[2], style: style, favor: favor,
            markerSize: markerSize, lateNUL: lateNUL)
    }

    static func line(_ random: inout SeededRandom, side: String) -> String {
        random.chance(70) ? random.pick(pool) : "\(side) \(random.int(0...99))"
    }

    /// Replaces, inserts, deletes or moves a few lines.
    static func edit(_ lines: inout [String], _ random: inout SeededRandom, side: String) {
        let at = random.int(0...lines.count)
        let new = (0..<random.int(1...3)).map { _ in line(&random, side: side) }
        let end = min(lines.count, at + random.int(1...3))
        switch random.int(0...3) {
        case 0: lines.replaceSubrange(at..<end, with: new)
        case 1: lines.insert(contentsOf: new, at: at)
        case 2: lines.removeSubrange(at..<end)
        default:
            let moved = Array(lines[at..<end])
            lines.removeSubrange(at..<end)
            lines.insert(contentsOf: moved, at: random.int(0...lines.count))
        }
    }

    /// Joins lines with LF, CRLF, a mix, or now and then a bare CR, and sometimes drops the final line end.
    static func render(_ lines: [String], _ random: inout SeededRandom) -> Data {
        let mode = random.int(0...9)
        var text = ""
        for line in lines {
            text += line
            switch mode {
            case 0...5: text += "\n"
            case 6, 7: text += "\r\n"
            case 8: text += random.chance(50) ? "\r\n" : "\n"
            default: text += random.chance(20) ? "\r" : "\n"
            }
        }
        if !text.isEmpty, random.chance(20) {
            text.removeLast()  // "\r\n" is one Character: this drops the whole line end
        }
        return Data(text.utf8)
    }
}
