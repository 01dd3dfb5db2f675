import Foundation
import TestSupport
import Testing

/// `truce merge-file` where `git merge-file` (2.39, the oracle) is used without `-p`: the result written into CURRENT,
/// `-q`, errors and their statuses, `merge.conflictStyle` from the repository's config, and `--object-id`.
@Suite(.timeLimit(.minutes(20))) struct MergeFileDropInTests {
    typealias Fixtures = MergeFileCommandTests

    /// What one run left: its status, stdout, stderr and the bytes of every file in its directory.
    struct Outcome: Equatable, CustomStringConvertible {
        let status: Int32
        let stdout: Data
        let stderr: String
        let files: [String: Data]

        var description: String {
            let current = files["current"].map { String(decoding: $0, as: UTF8.self).debugDescription } ?? "none"
            return "exit \(status), stdout \(stdout.escaped), stderr \(stderr.debugDescription), current \(current), \(files.count) files"
        }
    }

    /// Runs `git merge-file arguments` and `truce merge-file arguments` in two copies of the fixtures, each made by
    /// `prepare` (a repository, say), with `environment` added to the isolated one.
    static func both(
        _ arguments: [String], environment: [String: String] = [:], prepare: (String) throws -> Void = { _ in }
    ) async throws -> (git: Outcome, truce: Outcome) {
        let top = TemporaryDirectory("truce-merge-file-drop-in")
        var outcomes: [Outcome] = []
        for (name, program) in [("git", ["/usr/bin/env", "git"]), ("truce", [try Fixtures.builtTruce()])] {
            let directory = top.file(name)
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            for (file, text) in Fixtures.fixtures { try Data(text.utf8).write(to: URL(fileURLWithPath: directory + "/" + file)) }
            try Data([0x61, 0x00, 0x62, 0x0A]).write(to: URL(fileURLWithPath: directory + "/binary"))
            try FileManager.default.createDirectory(atPath: directory + "/folder", withIntermediateDirectories: true)
            try prepare(directory)
            let result = try await runAsync(
                program[0], Array(program.dropFirst()) + ["merge-file"] + arguments,
                environment: Fixtures.isolated(directory).merging(environment) { $1 }, directory: directory)
            outcomes.append(Outcome(status: result.status, stdout: result.stdout, stderr: result.errorOutput, files: Self.files(in: directory)))
        }
        return (outcomes[0], outcomes[1])
    }

    /// Every regular file under `directory` but git's object database, by relative path.
    static func files(in directory: String) -> [String: Data] {
        var files: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: directory)
        while let path = enumerator?.nextObject() as? String {
            if path.hasPrefix(".git/objects") || path.hasPrefix(".git/logs") || path == ".git/index" { continue }
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: directory + "/" + path, isDirectory: &isDirectory), !isDirectory.boolValue {
                files[path] = FileManager.default.contents(atPath: directory + "/" + path)
            }
        }
        return files
    }

    /// A repository in `directory` whose local config holds `config`.
    static func repository(_ config: [(String, String)]) -> (String) throws -> Void {
        { directory in
            let created = try git(["init", "-q", directory])
            try #require(created.status == 0, "\(created.errorOutput)")
            for (name, value) in config { try #require(try git(["-C", directory, "config", name, value]).status == 0) }
        }
    }

    @Test func writesTheResultIntoCurrentAsGitDoes() async throws {
        for files in Fixtures.triples {
            for options in [[], ["--diff3"], ["--zdiff3", "-L", "a", "-L", "b"], ["--union"], ["--ours"], ["-q"], ["--marker-size=9"]] {
                let (git, truce) = try await Self.both(options + files)
                #expect(truce == git, "\(options) \(files):\ngit:   \(git)\ntruce: \(truce)")
                #expect(git.stdout.isEmpty && git.stderr.isEmpty)
            }
        }
    }

    @Test func keepsTheFileItWritesIntoItsModeAndLinks() async throws {
        let directory = Fixtures.writeFixtures()
        let current = directory.file("current")
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: current)
        try FileManager.default.linkItem(atPath: current, toPath: directory.file("hard-link"))
        let result = try await runAsync(try Fixtures.builtTruce(), ["merge-file", "current", "base", "other"], directory: directory.path)
        #expect(result.status == 2)
        let merged = try #require(FileManager.default.contents(atPath: current))
        #expect(merged != Data(Fixtures.fixtures["current"]!.utf8) && merged.starts(with: Data("a\n<<<<<<< current\n".utf8)))
        #expect(FileManager.default.contents(atPath: directory.file("hard-link")) == merged, "written in place, not replaced")
        #expect(try FileManager.default.attributesOfItem(atPath: current)[.posixPermissions] as? Int == 0o640)
    }

    /// Files git cannot read or merge: the same `error:` line and status 255 (nothing on stderr with `-q`), and
    /// nothing written.
    @Test(arguments: [
        ["current", "missing", "other"], ["current", "base", "folder"], ["binary", "base", "other"], ["current", "binary", "other"],
        ["-p", "current", "base", "binary"], ["-q", "current", "binary", "other"], ["-q", "missing", "base", "other"],
        ["current", "binary", "missing"],
    ])
    func unreadableAndBinaryFilesFailAsInGit(arguments: [String]) async throws {
        let (git, truce) = try await Self.both(arguments)
        #expect(truce == git, "\(arguments):\ngit:   \(git)\ntruce: \(truce)")
        #expect(git.status == 255)
    }

    @Test func outsideARepositoryItRefusesObjectIDsAsGitDoes() async throws {
        let directory = Fixtures.writeFixtures()
        let result = try await runAsync(
            try Fixtures.builtTruce(), ["merge-file", "--object-id", "current", "base", "other"],
            environment: Fixtures.isolated(directory.path), directory: directory.path)
        #expect(result.status == 128)
        #expect(result.errorOutput == "fatal: not a git repository (or any of the parent directories): .git\n")
        #expect(FileManager.default.contents(atPath: directory.file("current")) == Data(Fixtures.fixtures["current"]!.utf8))
    }

    /// Bad usage is git's status 129, one line, and nothing written; the wording is Truce's.
    @Test(arguments: [
        ["current", "base"], ["current", "base", "other", "extra"], ["-L", "1", "-L", "2", "-L", "3", "-L", "4", "current", "base", "other"],
        ["--marker-size", "seven", "current", "base", "other"], ["--marker-size=", "current", "base", "other"],
        ["--bogus", "current", "base", "other"],
        ["-z", "current", "base", "other"], ["--stdout=yes", "current", "base", "other"], ["current", "base", "other", "-L"],
    ])
    func badUsageExitsWith129AsInGit(arguments: [String]) async throws {
        let (git, truce) = try await Self.both(arguments)
        #expect(git.status == 129)
        #expect(truce.status == 129)
        #expect(truce.files == git.files)
        #expect(truce.stderr.split(separator: "\n").count == 1 && truce.stderr.hasPrefix("truce: merge-file: "), "\(truce.stderr)")
    }

    /// Where git 2.39 has no counterpart: later git's --diff-algorithm, and libgit2's limits.
    @Test func optionsGitLacksAreCheckedToo() async throws {
        let directory = Fixtures.writeFixtures()
        let files = ["current", "base", "other"]
        for (arguments, message) in [
            (["--diff-algorithm", "histogram"] + files, "histogram is not available"), (["--diff-algorithm=fancy"] + files, "accepts \"myers\""),
            (files + ["--diff-algorithm"], "requires a value"), (["--marker-size=70000"] + files, "at most 65535"),
            (["--d"] + files, "ambiguous option"),
        ] {
            let result = try await runAsync(try Fixtures.builtTruce(), ["merge-file"] + arguments, directory: directory.path)
            #expect(result.status == 129, "\(arguments)")
            #expect(result.errorOutput.contains(message), "\(arguments): \(result.errorOutput)")
        }
        #expect(FileManager.default.contents(atPath: directory.file("current")) == Data(Fixtures.fixtures["current"]!.utf8))
    }

    /// `merge.conflictStyle` as git reads it: inside a repository only, from the repository's config, the global file
    /// and `git -c` (GIT_CONFIG_PARAMETERS), the last one winning and options overriding it; a bad value is fatal.
    @Test func readsMergeConflictStyleAsGitDoes() async throws {
        let global = TemporaryDirectory("truce-global-config")
        let diff3Global = global.write(.text("[merge]\n\tconflictStyle = diff3\n"), to: "diff3")
        let bogusGlobal = global.write(.text("[merge]\n\tconflictstyle = fancy\n"), to: "bogus")
        let files = ["current", "base", "other"]
        let cases: [(arguments: [String], environment: [String: String], config: [(String, String)]?)] = [
            (files, [:], [("merge.conflictStyle", "diff3")]),
            (files, [:], [("merge.conflictStyle", "zdiff3")]),
            (files, [:], [("merge.conflictstyle", "merge")]),
            (["-p"] + files, [:], [("merge.conflictStyle", "diff3")]),
            (["--no-diff3", "-p"] + files, [:], [("merge.conflictStyle", "diff3")]),
            (["--zdiff3", "-p"] + files, [:], [("merge.conflictStyle", "diff3")]),
            (["-p"] + files, ["GIT_CONFIG_GLOBAL": diff3Global], []),
            (["-p"] + files, ["GIT_CONFIG_GLOBAL": diff3Global], [("merge.conflictStyle", "merge")]),
            // Outside a repository git 2.39 reads no config at all.
            (["-p"] + files, ["GIT_CONFIG_GLOBAL": diff3Global], nil),
            (["-p"] + files, ["GIT_CONFIG_PARAMETERS": "'merge.conflictstyle'='zdiff3'"], [("merge.conflictStyle", "diff3")]),
            (["-p"] + files, ["GIT_CONFIG_PARAMETERS": "'Merge.ConflictStyle=diff3'"], []),
            (["-p"] + files, ["GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "merge.conflictStyle", "GIT_CONFIG_VALUE_0": "diff3"], []),
            (["-p"] + files, [:], [("merge.conflictStyle", "fancy")]),
            (["-p", "--diff3"] + files, ["GIT_CONFIG_GLOBAL": bogusGlobal], [("merge.conflictStyle", "diff3")]),
            (["-p"] + files, ["GIT_CONFIG_PARAMETERS": "'merge.conflictstyle'"], []),
        ]
        for (arguments, environment, config) in cases {
            let prepare = config.map { Self.repository($0) } ?? { _ in }
            let (git, truce) = try await Self.both(arguments, environment: environment, prepare: prepare)
            #expect(truce == git, "\(arguments) \(environment) \(config ?? []):\ngit:   \(git)\ntruce: \(truce)")
        }
        // The cases above must have shown every style and the fatal error.
        let shown = try await Self.both(["-p"] + files, prepare: Self.repository([("merge.conflictStyle", "zdiff3")]))
        #expect(String(decoding: shown.git.stdout, as: UTF8.self).contains("||||||| base"))
        let fatal = try await Self.both(files, prepare: Self.repository([("merge.conflictStyle", "fancy")]))
        #expect(fatal.git.status == 128 && fatal.git.stderr == "fatal: unknown style 'fancy' given for 'merge.conflictstyle'\n")
    }

    /// `--object-id` (git 2.43): blobs named by any revision; without `-p` the result is written as a blob and its id
    /// printed. The oracle: git merge-file on the blobs' bytes with the revisions as labels, and `git hash-object`.
    @Test func mergesBlobsOfTheRepositoryByObjectID() async throws {
        let directory = Fixtures.writeFixtures()
        let path = directory.path
        func inRepository(_ arguments: String...) throws -> String {
            let result = try git(["-C", path] + arguments)
            try #require(result.status == 0, "git \(arguments): \(result.errorOutput)")
            return result.output.trimmingCharacters(in: .newlines)
        }
        _ = try inRepository("init", "-q")
        _ = try inRepository("add", "current", "base", "other", "clean")
        _ = try inRepository("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "files")
        let baseID = try inRepository("rev-parse", "HEAD:base")
        let truce = try Fixtures.builtTruce()
        let oracleFiles = TemporaryDirectory("truce-object-id-oracle")
        for (revisions, options) in [
            (["HEAD:current", baseID, "HEAD:other"], [String]()), (["HEAD:clean", "HEAD:base", "HEAD:current"], []),
            (["HEAD:current", String(baseID.prefix(10)), "HEAD:other"], ["--diff3"]), ([":current", ":base", ":other"], ["-L", "x"]),
        ] {
            // git merge-file on the blobs' bytes, labelled with the revisions (or the -L given).
            for (index, revision) in revisions.enumerated() {
                oracleFiles.write(try git(["-C", path, "cat-file", "blob", revision]).stdout, to: "\(index)")
            }
            let labels = options.contains("-L") ? [] : ["-L", revisions[0]]
            let oracle = try await gitWithoutUserConfig(
                ["merge-file", "-p"] + options + labels + ["-L", revisions[1], "-L", revisions[2], "0", "1", "2"], in: oracleFiles.path)
            #expect(oracle.stderr.isEmpty)
            let printed = try await runAsync(truce, ["merge-file", "-p", "--object-id"] + options + revisions, directory: path)
            #expect(printed.status == oracle.status, "\(revisions)")
            #expect(printed.stdout == oracle.stdout, "\(revisions):\n\(printed.output)\n\(oracle.output)")
            let written = try await runAsync(truce, ["merge-file", "--object-id"] + options + revisions, directory: path)
            #expect(written.status == oracle.status)
            let id = written.output.trimmingCharacters(in: .newlines)
            #expect(id == (try git(["hash-object", "--stdin"], input: oracle.stdout).output.trimmingCharacters(in: .newlines)))
            #expect(try git(["-C", path, "cat-file", "blob", id]).stdout == oracle.stdout)
        }
        #expect(try git(["-C", path, "fsck", "--strict"]).status == 0)
        for (revision, status, message) in [
            ("HEAD:nothing", Int32(255), "error: object 'HEAD:nothing' does not exist\n"),
            ("HEAD", 128, "fatal: unable to read blob object \(try inRepository("rev-parse", "HEAD"))\n"),
        ] {
            let result = try await runAsync(truce, ["merge-file", "--object-id", revision, "HEAD:base", "HEAD:other"], directory: path)
            #expect(result.status == status && result.errorOutput == message, "\(revision): \(result.errorOutput)")
            let quiet = try await runAsync(truce, ["merge-file", "-q", "--object-id", revision, "HEAD:base", "HEAD:other"], directory: path)
            #expect(quiet.status == status && quiet.stderr.isEmpty)
        }
    }

    /// `--diff-algorithm` (git 2.43) reaches the merge. git 2.39 has no such option, so myers is checked against its
    /// merge-file, and patience against the output git 2.47's `merge-file -p --diff-algorithm=patience` gave for these
    /// files (built from git's source for this check; minimal gives myers' here, in both).
    @Test func diffAlgorithmsChangeTheMergeAsLaterGitsDo() async throws {
        let directory = TemporaryDirectory("truce-diff-algorithm")
        func lines(_ words: [String]) -> Data { Data(words.map { $0 + "\n" }.joined().utf8) }
        // Lines that repeat make myers and patience align differently (found by a search over small random triples).
        directory.write(lines(["y", "b", "x", "y", "z", "y", "z", "z"]), to: "base")
        directory.write(lines(["z", "y", "b", "x e", "y", "z", "y", "a 1 e", "z"]), to: "ours")
        directory.write(lines(["y", "b", "b", "x", "y", "z", "z", "y", "z"]), to: "theirs")
        let myers = lines([
            "z", "y", "b", "<<<<<<< ours", "x e", "y", "z", "y", "a 1 e", "=======", "b", "x", "y", "z", "z", "y", ">>>>>>> theirs", "z",
        ])
        let patience = lines([
            "z", "y", "b", "<<<<<<< ours", "x e", "=======", "b", "x", ">>>>>>> theirs", "y", "z", "z", "y", "<<<<<<< ours", "a 1 e", "=======",
            ">>>>>>> theirs", "z",
        ])
        let git = try await gitWithoutUserConfig(["merge-file", "-p", "ours", "base", "theirs"], in: directory.path)
        #expect(git.stdout == myers && git.status == 1)
        for (algorithm, expected, status) in [("myers", myers, Int32(1)), ("default", myers, 1), ("minimal", myers, 1), ("Patience", patience, 2)] {
            let result = try await runAsync(
                try Fixtures.builtTruce(), ["merge-file", "-p", "--diff-algorithm=\(algorithm)", "ours", "base", "theirs"], directory: directory.path)
            #expect(result.stdout == expected, "\(algorithm):\n\(result.output)")
            #expect(result.status == status, "\(algorithm)")
        }
    }
}
