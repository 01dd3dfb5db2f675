import Foundation
import TestSupport
import Testing
import Truce

/// The structured merge beside `git merge-file`, the line merge people would otherwise get: never silently wrong where
/// git asks for a reason a tool can see, and never asking where git merges a list right.
@Suite(.timeLimit(.minutes(10))) struct StructuredAgainstGitTests {
    struct Outcome {
        let text: String
        let conflicts: Int
    }

    static func structured(_ base: String, _ ours: String, _ theirs: String) throws -> Outcome {
        let result = try StructuredMerge.mergeFiles(
            base: Data(base.utf8), current: Data(ours.utf8), other: Data(theirs.utf8), path: "package.json")
        return Outcome(text: String(decoding: result.content, as: UTF8.self), conflicts: result.conflictCount)
    }

    static func lineMerge(_ base: String, _ ours: String, _ theirs: String, in directory: TemporaryDirectory) throws -> Outcome {
        for (name, text) in [("base", base), ("ours", ours), ("theirs", theirs)] {
            try Data(text.utf8).write(to: URL(fileURLWithPath: "\(directory.path)/\(name)"))
        }
        let result = try git(["merge-file", "-p", "\(directory.path)/ours", "\(directory.path)/base", "\(directory.path)/theirs"])
        return Outcome(text: result.output, conflicts: Int(result.status))
    }

    static func value(_ text: String) throws -> StructuredValueText { try StructuredValueText(Data(text.utf8)) }

    /// A package.json-like document whose list of file patterns is laid out one per line, as people keep them.
    static func document(_ files: [String]) -> String {
        "{\n  \"name\": \"app\",\n  \"files\": [\n" + files.map { "    \"\($0)\"" }.joined(separator: ",\n") + "\n  ],\n  \"private\": true\n}\n"
    }

    @Test func wherePeopleInsertedIntoAListAtDifferentPlacesAndGitMergedTheStructuredMergeGivesTheSameList() throws {
        let directory = TemporaryDirectory()
        var random = SeededRandom(seed: 4949)
        var gitClean = 0, bothClean = 0
        for index in 0..<300 {
            // Patterns repeat now and then (a list people edit by hand does), so an insertion has look-alike neighbours.
            let pool = ["lib", "dist", "index.js", "types", "!**/*.test.js", "src/**", "README.md", "lib"]
            var base: [String] = []
            for _ in 0..<random.int(2...7) { base.append(random.pick(pool)) }
            var ours = base, theirs = base
            for _ in 0..<random.int(1...2) { ours.insert("ours-\(index)-\(random.int(0...99))", at: random.int(0...ours.count)) }
            for _ in 0..<random.int(1...2) { theirs.insert("theirs-\(index)-\(random.int(0...99))", at: random.int(0...theirs.count)) }
            let (b, o, t) = (Self.document(base), Self.document(ours), Self.document(theirs))
            let line = try Self.lineMerge(b, o, t, in: directory)
            guard line.conflicts == 0 else { continue }
            gitClean += 1
            let merged = try Self.structured(b, o, t)
            #expect(merged.conflicts == 0, "case \(index): git merged the lists, the structured merge asked:\n\(merged.text)")
            guard merged.conflicts == 0 else { continue }
            bothClean += 1
            #expect(try Self.value(merged.text) == Self.value(line.text), "case \(index):\ngit:\n\(line.text)\nstructured:\n\(merged.text)")
            #expect(merged.text == line.text, "case \(index): git's bytes\n\(line.text)\nstructured:\n\(merged.text)")
        }
        #expect(gitClean >= 100, "git merged \(gitClean)")
    }

    /// Each class of merge that used to be silently wrong, with what git's line merge does with it.
    @Test(arguments: [
        // Both sides renamed one member, differently: git asks, and so does the structured merge.
        (
            "{\n  \"X|zero\": \"no items\",\n  \"X\": \"items\"\n}\n",
            "{\n  \"X\": {\n    \"zero\": \"no items\",\n    \"other\": \"items\"\n  }\n}\n",
            "{\n  \"X_zero\": \"no items\",\n  \"X\": \"items\"\n}\n", true
        ),
        // One side renamed a member, the other removed it.
        (
            "{\n  \"a\": 1,\n  \"greeting\": \"hello\",\n  \"z\": 2\n}\n", "{\n  \"a\": 1,\n  \"salutation\": \"hello\",\n  \"z\": 2\n}\n",
            "{\n  \"a\": 1,\n  \"z\": 2\n}\n", true
        ),
        // Both sides moved an object into different new places.
        (
            "{\n  \"server\": {\"host\": \"a\", \"port\": 1},\n  \"x\": 1\n}\n",
            "{\n  \"net\": {\"main\": {\"host\": \"a\", \"port\": 1}},\n  \"x\": 1\n}\n",
            "{\n  \"backend\": {\"host\": \"a\", \"port\": 1},\n  \"x\": 1\n}\n", true
        ),
        // A key held twice: one side drops the second, the other edits the first.
        ("{\n  \"a\": 1,\n  \"b\": 0,\n  \"a\": 2\n}\n", "{\n  \"a\": 1,\n  \"b\": 0\n}\n", "{\n  \"a\": 7,\n  \"b\": 0,\n  \"a\": 2\n}\n", true),
    ])
    func aContradictedMoveOrAMisleadingDuplicateIsAConflictAsInGit(base: String, ours: String, theirs: String, gitAsks: Bool) throws {
        let directory = TemporaryDirectory()
        let line = try Self.lineMerge(base, ours, theirs, in: directory)
        #expect((line.conflicts > 0) == gitAsks, "git: \(line.text)")
        for (current, other) in [(ours, theirs), (theirs, ours)] {
            let merged = try Self.structured(base, current, other)
            #expect(merged.conflicts > 0, "merged without asking:\n\(merged.text)")
        }
    }
}
