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

    /// One side only changed the layout of a region (moved members, laid an object out on one line, added or removed
    /// the final line break), the other edited a value: the result is the first side's bytes with the edit, which
    /// git's line merge gives only where the edit is on lines the layout change did not touch.
    @Test func whereOneSideOnlyChangedTheLayoutTheResultIsItsBytesWithTheOtherSidesEdit() throws {
        let directory = TemporaryDirectory()
        var random = SeededRandom(seed: 4950)
        var cases = 0, exact = 0, gitExact = 0
        for index in 0..<300 {
            let scenario = ModelScenario.make(&random)
            let base = scenario.base
            var objects: [[String]] = [[]], scalars: [[String]] = []
            func walk(_ value: ModelValue, _ path: [String]) {
                for member in value.members ?? [] {
                    let here = path + [member.key]
                    if member.value.members != nil { objects.append(here) } else if member.value.elements == nil { scalars.append(here) }
                    walk(member.value, here)
                }
            }
            walk(base, [])
            guard !scalars.isEmpty else { continue }
            var baseLayout = ModelJSON(indent: "  ")
            baseLayout.trailingNewline = random.chance(50)
            var theirLayout = baseLayout
            var theirs = base
            switch random.int(0...2) {
            case 0:
                // Members moved: an object's members in another order.
                let path = random.pick(objects)
                guard var members = base.value(at: path)?.members, members.count > 1 else { continue }
                members.swapAt(0, members.count - 1)
                theirs = path.isEmpty ? .object(members) : base.replacing(path, with: .object(members))
            case 1:
                // A block laid out on one line.
                guard objects.count > 1 else { continue }
                theirLayout.inlinePaths = [random.pick(Array(objects.dropFirst()))]
            default:
                theirLayout.trailingNewline.toggle()
            }
            let edited = random.pick(scalars)
            let change = ModelValue.string("edited \(index)")
            let (b, o, t) = (
                String(decoding: baseLayout.write(base), as: UTF8.self),
                String(decoding: baseLayout.write(base.replacing(edited, with: change)), as: UTF8.self),
                String(decoding: theirLayout.write(theirs), as: UTF8.self)
            )
            let expected = String(decoding: theirLayout.write(theirs.replacing(edited, with: change)), as: UTF8.self)
            cases += 1
            for (current, other) in [(o, t), (t, o)] {
                let merged = try Self.structured(b, current, other)
                #expect(
                    merged.conflicts == 0 && merged.text == expected, "case \(index):\nbase:\n\(b)\nwanted:\n\(expected)\nwritten:\n\(merged.text)")
                if merged.conflicts == 0 && merged.text == expected && current == o { exact += 1 }
            }
            if try Self.lineMerge(b, o, t, in: directory).text == expected { gitExact += 1 }
        }
        #expect(cases >= 200 && exact >= gitExact, "byte-exact: structured \(exact), git \(gitExact) of \(cases)")
    }
}
