import Foundation
import Testing

/// `truce merge-file` against `git merge-file -p` run on the same files with the same arguments.
@Suite struct MergeFileCommandTests {
    /// Files with one conflict, two conflicts, a clean merge, CRLF and no final newline, marker-like content.
    private static let fixtures: [String: String] = [
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

    private static let triples: [[String]] = [
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
        ["--marker-size", "3"], ["--marker-size=12", "--diff3"], ["--marker-size", "0"],
    ]

    @Test func printsWhatGitMergeFilePrints() async throws {
        let directory = try Self.writeFixtures()
        let truce = try #require(mergeFileTestTruceExecutable(), "the truce executable was not built")
        var runs = 0
        for files in Self.triples {
            for options in Self.optionSets {
                let git = try await mergeFileTestRunGit(["merge-file", "-p"] + options + files, in: directory.url)
                let ours = try await mergeFileTestRun(truce, ["merge-file"] + options + files, in: directory.url)
                #expect(git.stderr.isEmpty, "git \(options) \(files): \(String(decoding: git.stderr, as: UTF8.self))")
                #expect(ours.stdout == git.stdout, "\(options) \(files):\ngit:   \(mergeFileTestEscaped(git.stdout))\ntruce: \(mergeFileTestEscaped(ours.stdout))")
                #expect(ours.status == git.status, "\(options) \(files): exit \(ours.status), git \(git.status)")
                #expect(ours.stderr.isEmpty, "\(options) \(files): \(String(decoding: ours.stderr, as: UTF8.self))")
                runs += 1
            }
        }
        #expect(runs == Self.triples.count * Self.optionSets.count)
    }

    @Test func exitStatusIsTheNumberOfConflictsCappedAt127() async throws {
        let directory = try MergeFileTestDirectory()
        let truce = try #require(mergeFileTestTruceExecutable(), "the truce executable was not built")
        // Conflicts four lines apart, with letters between them, stay separate hunks.
        for count in [3, 130] {
            let files = ["current", "base", "other"]
            for side in files {
                let text = (0..<count).map { "\(side) \($0)\nkeep \($0) a\nkeep \($0) b\nkeep \($0) c\nkeep \($0) d\n" }.joined()
                try Data(text.utf8).write(to: directory.url.appendingPathComponent(side))
            }
            let git = try await mergeFileTestRunGit(["merge-file", "-p"] + files, in: directory.url)
            let ours = try await mergeFileTestRun(truce, ["merge-file"] + files, in: directory.url)
            #expect(git.status == Int32(min(count, 127)))
            #expect(ours.status == git.status)
            #expect(ours.stdout == git.stdout)
        }
    }

    @Test func anUnreadableFileExitsWithStatus2AndOneLine() async throws {
        let directory = try Self.writeFixtures()
        let truce = try #require(mergeFileTestTruceExecutable(), "the truce executable was not built")
        try FileManager.default.createDirectory(at: directory.url.appendingPathComponent("folder"), withIntermediateDirectories: true)
        for files in [["current", "missing", "other"], ["folder", "base", "other"], ["current", "base", "-"]] {
            let result = try await mergeFileTestRun(truce, ["merge-file"] + files, in: directory.url)
            let lines = String(decoding: result.stderr, as: UTF8.self).split(separator: "\n")
            #expect(result.status == 2, "\(files)")
            #expect(lines.count == 1, "\(files): \(lines)")
            #expect(result.stdout.isEmpty)
        }
        try Data([0x61, 0x00, 0x62, 0x0A]).write(to: directory.url.appendingPathComponent("binary"))
        let binary = try await mergeFileTestRun(truce, ["merge-file", "current", "binary", "other"], in: directory.url)
        #expect(binary.status == 2)
        #expect(String(decoding: binary.stderr, as: UTF8.self).split(separator: "\n").count == 1)
    }

    @Test func badUsageExitsWithStatus2() async throws {
        let directory = try Self.writeFixtures()
        let truce = try #require(mergeFileTestTruceExecutable(), "the truce executable was not built")
        for arguments in [
            ["current", "base"], ["current", "base", "other", "extra"],
            ["-L", "1", "-L", "2", "-L", "3", "-L", "4", "current", "base", "other"],
            ["--marker-size", "seven", "current", "base", "other"],
        ] {
            let result = try await mergeFileTestRun(truce, ["merge-file"] + arguments, in: directory.url)
            #expect(result.status == 2, "\(arguments)")
            #expect(String(decoding: result.stderr, as: UTF8.self).split(separator: "\n").count == 1, "\(arguments)")
        }
    }

    private static func writeFixtures() throws -> MergeFileTestDirectory {
        let directory = try MergeFileTestDirectory()
        for (name, text) in fixtures {
            try Data(text.utf8).write(to: directory.url.appendingPathComponent(name))
        }
        return directory
    }
}

/// A temporary directory removed when the value goes away.
private final class MergeFileTestDirectory: Sendable {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("truce-merge-file-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }
}

private struct MergeFileTestProcessResult: Sendable {
    let status: Int32
    let stdout: Data
    let stderr: Data
}

/// The `truce` built next to the test bundle, or in the package's default build directory.
private func mergeFileTestTruceExecutable() -> String? {
    let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    return [
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("truce").path,
        Bundle.main.bundleURL.appendingPathComponent("truce").path,
        packageRoot.appendingPathComponent(".build/debug/truce").path,
    ].first { FileManager.default.isExecutableFile(atPath: $0) }
}

/// Runs git with no user or system configuration, since `merge.conflictStyle` there would change merge-file's output.
private func mergeFileTestRunGit(_ arguments: [String], in directory: URL) async throws -> MergeFileTestProcessResult {
    try await mergeFileTestRun("/usr/bin/env", ["git"] + arguments, in: directory, environment: [
        "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CEILING_DIRECTORIES": directory.deletingLastPathComponent().path,
    ])
}

/// Runs a process to its end without holding a thread while it runs; output goes through files, so no pipe can fill up.
private func mergeFileTestRun(_ executable: String, _ arguments: [String], in directory: URL,
                              environment: [String: String] = [:]) async throws -> MergeFileTestProcessResult {
    let outputs = FileManager.default.temporaryDirectory.appendingPathComponent("truce-run-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: outputs, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: outputs) }
    let stdoutURL = outputs.appendingPathComponent("stdout"), stderrURL = outputs.appendingPathComponent("stderr")
    try Data().write(to: stdoutURL)
    try Data().write(to: stderrURL)
    let stdout = try FileHandle(forWritingTo: stdoutURL), stderr = try FileHandle(forWritingTo: stderrURL)

    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.currentDirectoryURL = directory
    var environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    environment.removeValue(forKey: "TRUCE_STORE")
    process.environment = environment
    process.standardInput = FileHandle.nullDevice
    (process.standardOutput, process.standardError) = (stdout, stderr)
    let status: Int32 = try await withCheckedThrowingContinuation { continuation in
        process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
        do {
            try process.run()
        } catch {
            process.terminationHandler = nil
            continuation.resume(throwing: error)
        }
    }
    try stdout.close()
    try stderr.close()
    return MergeFileTestProcessResult(status: status, stdout: try Data(contentsOf: stdoutURL), stderr: try Data(contentsOf: stderrURL))
}

/// Bytes as a one-line Swift-like literal, for failure messages.
private func mergeFileTestEscaped(_ data: Data) -> String {
    String(decoding: data, as: UTF8.self).debugDescription
}
