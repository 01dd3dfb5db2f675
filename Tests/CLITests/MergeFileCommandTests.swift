import Foundation
import TestSupport
import Testing

/// `truce merge-file` against `git merge-file -p` run on the same files with the same arguments.
@Suite(.timeLimit(.minutes(20))) struct MergeFileCommandTests {
    /// Files with one conflict, two conflicts, a clean merge, CRLF and no final newline, marker-like content.
    static let fixtures: [String: String] = [
        "base": "a\nb\nc\nd\ne\nf\ng\nh\ni\n",
        "current": "a\nB current\nc\nd\ne\nf\ng\nH current\ni\n",
        "other": "a\nB other\nc\nd\ne\nf\ng\nH other\ni\n",
        "clean": "a\nb\nc\nd\ne\nf\ng\nh\ni\nappended\n",
        "one": "a\nb one\nc\nd\ne\nf\ng\nh\ni\n",
        "crlf-base": "x\r\ny\r\nz",
        "crlf-current": "x\r\ny mine\r\nz",
        "crlf-other": "x\r\ny theirs\r\nz",
        "markers": "a\n<<<<<<< not a marker\nc\nd\ne\nf\ng\n=======\ni\n",
        "shared": "a\nsame start\nB current\nsame end\nc\nd\ne\nf\ng\nh\ni\n",
        "shared-other": "a\nsame start\nB other\nsame end\nc\nd\ne\nf\ng\nh\ni\n",
    ]

    static let triples: [[String]] = [
        ["current", "base", "other"],
        ["one", "base", "other"],
        ["clean", "base", "current"],
        ["crlf-current", "crlf-base", "crlf-other"],
        ["markers", "base", "current"],
        ["shared", "base", "shared-other"],
    ]

    private static let optionSets: [[String]] = [
        [], ["--diff3"], ["--zdiff3"],
        ["-L", "mine"], ["-L", "mine", "-L", "ancestor"], ["--diff3", "-L", "mine", "-L", "ancestor", "-L", "yours"],
        ["--zdiff3", "-L", "", "-L", "base label", "-L", "x y"],
        ["--ours"], ["--theirs"], ["--union"], ["--diff3", "--union"],
        ["--marker-size", "3"], ["--marker-size=12", "--diff3"], ["--marker-size", "0"], ["--marker-size=-4"], ["--no-marker-size"],
        // git's parse-options: the last of a group wins, --no- undoes, flags bundle, values stick, long names abbreviate.
        ["--diff3", "--zdiff3"], ["--zdiff3", "--no-zdiff3"], ["--ours", "--union"], ["--union", "--no-union"], ["-q"], ["--quiet"],
        ["-Lmine", "-L", "ancestor"], ["-qLmine"], ["--the"], ["--zd", "--uni", "--marker=9"], ["--stdout"], ["--no-stdout", "-p"],
    ]

    @Test func printsWhatGitMergeFilePrints() async throws {
        let directory = Self.writeFixtures()
        let truce = try Self.builtTruce()
        var runs = 0
        for files in Self.triples {
            for options in Self.optionSets {
                let git = try await gitWithoutUserConfig(["merge-file", "-p"] + options + files, in: directory.path)
                let ours = try await runAsync(
                    truce, ["merge-file", "-p"] + options + files, environment: Self.isolated(directory.path), directory: directory.path)
                #expect(git.stderr.isEmpty, "git \(options) \(files): \(git.errorOutput)")
                #expect(ours.stdout == git.stdout, "\(options) \(files):\ngit:   \(git.stdout.escaped)\ntruce: \(ours.stdout.escaped)")
                #expect(ours.status == git.status, "\(options) \(files): exit \(ours.status), git \(git.status)")
                #expect(ours.stderr.isEmpty, "\(options) \(files): \(ours.errorOutput)")
                runs += 1
            }
        }
        #expect(runs == Self.triples.count * Self.optionSets.count)
    }

    @Test func exitStatusIsTheNumberOfConflictsCappedAt127() async throws {
        let directory = TemporaryDirectory("truce-merge-file")
        let truce = try Self.builtTruce()
        // Conflicts four lines apart, with letters between them, stay separate hunks.
        for count in [3, 130] {
            let files = ["current", "base", "other"]
            for side in files {
                let text = (0..<count).map { "\(side) \($0)\nkeep \($0) a\nkeep \($0) b\nkeep \($0) c\nkeep \($0) d\n" }.joined()
                directory.write(Data(text.utf8), to: side)
            }
            let git = try await gitWithoutUserConfig(["merge-file", "-p"] + files, in: directory.path)
            let ours = try await runAsync(truce, ["merge-file", "-p"] + files, directory: directory.path)
            #expect(git.status == Int32(min(count, 127)))
            #expect(ours.status == git.status)
            #expect(ours.stdout == git.stdout)
        }
    }

    static func writeFixtures() -> TemporaryDirectory {
        let directory = TemporaryDirectory("truce-merge-file")
        for (name, text) in fixtures {
            directory.write(Data(text.utf8), to: name)
        }
        return directory
    }

    /// The environment both run in: no system or user config, no repository found above the test's directory.
    static func isolated(_ directory: String) -> [String: String] {
        [
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
            "GIT_CEILING_DIRECTORIES": URL(fileURLWithPath: directory).deletingLastPathComponent().path,
        ]
    }

    /// The `truce` built next to the test bundle, or in the package's default build directory.
    static func builtTruce() throws -> String {
        try #require(FileManager.default.isExecutableFile(atPath: truceExecutable), "the truce executable was not built")
        return truceExecutable
    }
}
