import Foundation
import TestSupport
import Testing

/// `truce merge-driver` as real `git merge` runs it in an ordinary repository.
@Suite(.timeLimit(.minutes(10))) struct MergeDriverCommandTests {
    static let base =
        "{\n  \"name\": \"app\",\n  \"version\": \"1.0\",\n  \"theme\": \"light\",\n  \"deps\": [\n    {\"id\": \"a\", \"v\": 1},\n    {\"id\": \"b\", \"v\": 1}\n  ]\n}\n"

    /// A repository whose `*.json` (and `*.txt`) files merge with `truce merge-driver`, with `base` committed.
    final class Repository: Sendable {
        let directory = TemporaryDirectory("truce-driver")
        var path: String { directory.path }

        init() throws {
            try git("init", "-q", "-b", "main")
            try git("config", "merge.truce.driver", "'\(truceExecutable)' merge-driver --marker-size %L %O %A %B %P")
            try git("config", "merge.truce.name", "Truce structured merge")
            try Data("*.json merge=truce\n*.txt merge=truce\n".utf8).write(to: URL(fileURLWithPath: directory.file(".gitattributes")))
            try write("config.json", MergeDriverCommandTests.base)
            try git("add", ".")
            try git("commit", "-q", "-m", "base")
        }

        @discardableResult
        func git(_ arguments: String...) throws -> ProcessResult {
            let result = try TestSupport.git(["-C", path] + arguments)
            try #require(result.status == 0, "git \(arguments) failed: \(result.errorOutput)")
            return result
        }

        func merge(_ branch: String) throws -> ProcessResult { try TestSupport.git(["-C", path, "merge", "--no-edit", branch]) }

        func write(_ name: String, _ text: String) throws {
            try Data(text.utf8).write(to: URL(fileURLWithPath: directory.file(name)))
        }

        func read(_ name: String) -> String { String(decoding: FileManager.default.contents(atPath: directory.file(name)) ?? Data(), as: UTF8.self) }

        /// Commits `text` as `name` on a new branch from main, then goes back to main.
        func commit(on branch: String, _ name: String, _ text: String) throws {
            try git("checkout", "-q", "-b", branch, "main")
            try write(name, text)
            try git("commit", "-q", "-am", branch)
            try git("checkout", "-q", "main")
        }
    }

    /// The merge rules of a store's `.truce/fields`, from `.truce-fields` beside `.gitattributes`, in a plain repository.
    @Test func gitMergeFollowsTheFieldRulesBesideGitattributes() throws {
        let repository = try Repository()
        try repository.write(".truce-fields", "counts.json /views counter\ncounts.json /tags union\n")
        try repository.write("counts.json", "{\n  \"views\": 10,\n  \"tags\": [\"a\"]\n}\n")
        try repository.git("add", ".")
        try repository.git("commit", "-q", "-m", "rules")
        try repository.commit(on: "phone", "counts.json", "{\n  \"views\": 12,\n  \"tags\": [\"a\", \"b\"]\n}\n")
        try repository.write("counts.json", "{\n  \"views\": 15,\n  \"tags\": [\"c\"]\n}\n")
        try repository.git("commit", "-q", "-am", "main")
        let merged = try repository.merge("phone")
        #expect(merged.status == 0, "\(merged.output) \(merged.errorOutput)")
        // 10 + 2 + 5 views; "a" removed on main, "b" added on phone, "c" on main.
        #expect(repository.read("counts.json") == "{\n  \"views\": 17,\n  \"tags\": [\"c\", \"b\"]\n}\n")
        // Without the rules, both sides changed the views: a conflict.
        try repository.git("reset", "-q", "--hard", "ORIG_HEAD")
        try repository.git("rm", "-q", ".truce-fields")
        try repository.git("commit", "-q", "-m", "no rules")
        let plain = try repository.merge("phone")
        #expect(plain.status == 1 && plain.output.contains("CONFLICT (content): Merge conflict in counts.json"), "\(plain.output)")
    }

    @Test func gitMergeIsCleanWhereALineMergeConflicts() throws {
        let repository = try Repository()
        // Neighbouring lines changed on each side: git's own line merge conflicts here.
        try repository.commit(
            on: "feature", "config.json",
            Self.base.replacingOccurrences(of: "\"1.0\"", with: "\"1.1\"")
                .replacingOccurrences(of: "{\"id\": \"b\", \"v\": 1}", with: "{\"id\": \"b\", \"v\": 2}"))
        try repository.write(
            "config.json",
            Self.base.replacingOccurrences(of: "\"light\"", with: "\"dark\"")
                .replacingOccurrences(of: "{\"id\": \"a\", \"v\": 1}", with: "{\"id\": \"a\", \"v\": 3}"))
        try repository.git("commit", "-q", "-am", "main")
        let lineMerge = try gitMergeFile(
            current: Data(repository.read("config.json").utf8), base: Data(Self.base.utf8),
            other: try repository.git("show", "feature:config.json").stdout)
        #expect(lineMerge.status > 0, "the case must be one git's line merge cannot do")

        let result = try repository.merge("feature")
        #expect(result.status == 0, "\(result.output) \(result.errorOutput)")
        #expect(
            repository.read("config.json")
                == Self.base.replacingOccurrences(of: "\"1.0\"", with: "\"1.1\"")
                .replacingOccurrences(of: "\"light\"", with: "\"dark\"").replacingOccurrences(
                    of: "{\"id\": \"a\", \"v\": 1}", with: "{\"id\": \"a\", \"v\": 3}"
                )
                .replacingOccurrences(of: "{\"id\": \"b\", \"v\": 1}", with: "{\"id\": \"b\", \"v\": 2}"))
        #expect(try repository.git("log", "-1", "--format=%P").output.split(separator: " ").count == 2)
        #expect(try repository.git("status", "--porcelain").output.isEmpty)
    }

    @Test func gitMergeConflictMarksOnlyTheConflictingMember() throws {
        let repository = try Repository()
        try repository.commit(
            on: "feature", "config.json",
            Self.base.replacingOccurrences(of: "\"light\"", with: "\"solarized\"")
                .replacingOccurrences(of: "\"1.0\"", with: "\"1.1\""))
        try repository.write("config.json", Self.base.replacingOccurrences(of: "\"light\"", with: "\"dark\""))
        try repository.git("commit", "-q", "-am", "main")

        let result = try repository.merge("feature")
        #expect(result.status == 1, "\(result.output) \(result.errorOutput)")
        #expect(try repository.git("status", "--porcelain").output.hasPrefix("UU config.json"))
        let expected = Self.base.replacingOccurrences(of: "\"1.0\"", with: "\"1.1\"").replacingOccurrences(
            of: "  \"theme\": \"light\",\n",
            with: "<<<<<<< ours\n  \"theme\": \"dark\",\n=======\n  \"theme\": \"solarized\",\n>>>>>>> theirs\n")
        #expect(repository.read("config.json") == expected, "\(repository.read("config.json"))")
    }

    @Test func otherFilesMergeLineByLineAndBadJSONFallsBackToLines() throws {
        let repository = try Repository()
        try repository.write("notes.txt", "a\nb\nc\nd\n")
        try repository.git("add", "notes.txt")
        try repository.git("commit", "-q", "-m", "notes")
        try repository.commit(on: "feature", "notes.txt", "a\nb\nc\nD\n")
        try repository.write("notes.txt", "A\nb\nc\nd\n")
        try repository.git("commit", "-q", "-am", "main")
        #expect(try repository.merge("feature").status == 0)
        #expect(repository.read("notes.txt") == "A\nb\nc\nD\n")

        // Both sides break the JSON differently; the driver says so and merges the lines, with git's markers.
        try repository.commit(on: "broken", "config.json", "{ not json, theirs\n")
        try repository.write("config.json", "{ not json, ours\n")
        try repository.git("commit", "-q", "-am", "broken main")
        let result = try repository.merge("broken")
        #expect(result.status == 1)
        #expect(result.errorOutput.contains("is not valid JSON"), "\(result.errorOutput)")
        #expect(repository.read("config.json").contains("<<<<<<<"))
    }

    @Test func propertyListsStayBinaryAndAConflictKeepsTheCurrentFile() throws {
        let directory = TemporaryDirectory("truce-driver-plist")
        func plist(_ entries: [String: Any]) throws -> Data {
            try PropertyListSerialization.data(fromPropertyList: entries, format: .binary, options: 0)
        }
        let base = directory.write(try plist(["a": 1, "b": 1]), to: "base")
        let other = directory.write(try plist(["a": 1, "b": 2]), to: "other")
        let current = directory.write(try plist(["a": 5, "b": 1]), to: "current")
        let clean = try truce(["merge-driver", base, current, other, "Settings.plist"])
        #expect(clean.status == 0, "\(clean.errorOutput)")
        let merged = try #require(FileManager.default.contents(atPath: current))
        #expect(merged.starts(with: Data("bplist".utf8)))
        let entries = try PropertyListSerialization.propertyList(from: merged, options: [], format: nil) as? [String: Int]
        #expect(entries == ["a": 5, "b": 2])

        let mine = try plist(["a": 5, "b": 3])
        try mine.write(to: URL(fileURLWithPath: current))
        let conflicted = try truce(["merge-driver", base, current, other, "Settings.plist"])
        #expect(conflicted.status == 1)
        #expect(FileManager.default.contents(atPath: current) == mine, "a conflicted property list stays as the current file was")
    }

    @Test func badUsageIsExitTwoWithOneLine() throws {
        let directory = TemporaryDirectory("truce-driver-usage")
        let file = directory.write(.text("{}"), to: "a.json")
        for arguments in [
            ["merge-driver", file, file], ["merge-driver", "--resolver", "nope", file, file, file],
            ["merge-driver", "--marker-size", "x", file, file, file], ["merge-driver", file, directory.file("missing"), file],
        ] {
            let result = try truce(arguments)
            #expect(result.status == 2, "\(arguments): \(result.status)")
            #expect(result.errorLines.count == 1 && result.errorLines[0].hasPrefix("truce: "), "\(result.errorLines)")
        }
        #expect(FileManager.default.contents(atPath: file) == .text("{}"))
    }
}
