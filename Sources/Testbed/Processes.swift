import Foundation

/// What a finished child process left: its exit status and everything it printed.
public struct ProcessResult: Sendable {
    public let status: Int32
    public let stdout: Data
    public let stderr: Data

    public var output: String { String(decoding: stdout, as: UTF8.self) }
    public var errorOutput: String { String(decoding: stderr, as: UTF8.self) }
    /// stderr, line by line.
    public var errorLines: [String] { errorOutput.split(separator: "\n").map(String.init) }
}

/// Runs `executable` with `arguments`, feeding `input` to its stdin, and waits for it.
public func run(
    _ executable: String, _ arguments: [String], input: Data = Data(), environment: [String: String] = [:],
    directory: String? = nil
) throws -> ProcessResult {
    let process = makeProcess(executable, arguments, environment: environment, directory: directory)
    let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
    (process.standardInput, process.standardOutput, process.standardError) = (stdin, stdout, stderr)
    try process.run()
    // Drain both pipes while the child runs so a large output cannot block it.
    let group = DispatchGroup()
    nonisolated(unsafe) var out = Data(), err = Data()
    group.enter()
    DispatchQueue.global().async {
        out = stdout.fileHandleForReading.readDataToEndOfFile()
        group.leave()
    }
    group.enter()
    DispatchQueue.global().async {
        err = stderr.fileHandleForReading.readDataToEndOfFile()
        group.leave()
    }
    let watchdog = killing(process, after: childProcessDeadline)
    stdin.fileHandleForWriting.write(input)
    try stdin.fileHandleForWriting.close()
    process.waitUntilExit()
    watchdog.cancel()
    group.wait()
    return ProcessResult(status: process.terminationStatus, stdout: out, stderr: err)
}

/// Runs `executable` like `run`, without holding a thread while the child runs.
/// stdin, stdout and stderr go through files, so no pipe can fill up and block either side.
public func runAsync(
    _ executable: String, _ arguments: [String], input: Data = Data(), environment: [String: String] = [:],
    directory: String? = nil
) async throws -> ProcessResult {
    let files = FileManager.default.temporaryDirectory.appendingPathComponent("truce-run-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: files, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: files) }
    let stdinURL = files.appendingPathComponent("stdin")
    let stdoutURL = files.appendingPathComponent("stdout"), stderrURL = files.appendingPathComponent("stderr")
    try input.write(to: stdinURL)
    try Data().write(to: stdoutURL)
    try Data().write(to: stderrURL)
    let stdin = try FileHandle(forReadingFrom: stdinURL)
    defer { try? stdin.close() }
    let stdout = try FileHandle(forWritingTo: stdoutURL)
    defer { try? stdout.close() }
    let stderr = try FileHandle(forWritingTo: stderrURL)
    defer { try? stderr.close() }

    let process = makeProcess(executable, arguments, environment: environment, directory: directory)
    (process.standardInput, process.standardOutput, process.standardError) = (stdin, stdout, stderr)
    nonisolated(unsafe) var watchdog: DispatchWorkItem?
    let status: Int32 = try await withCheckedThrowingContinuation { continuation in
        process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
        do {
            try process.run()
            watchdog = killing(process, after: childProcessDeadline)
        } catch {
            process.terminationHandler = nil
            continuation.resume(throwing: error)
        }
    }
    watchdog?.cancel()
    return ProcessResult(status: status, stdout: try Data(contentsOf: stdoutURL), stderr: try Data(contentsOf: stderrURL))
}

/// How long `run` and `runAsync` let a child run before killing it: far beyond any command a test runs, so that a
/// child that hangs ends as a failed test (its status is SIGKILL's) rather than a suite that never finishes.
public let childProcessDeadline: TimeInterval = 600

/// Kills `process` (started) with SIGKILL once `seconds` have passed, unless the returned item is cancelled first.
///
/// The item holds the process weakly: a cancelled item stays queued until its deadline, and a strong reference would
/// keep the process's pipes (three descriptors a run) open that long.
private func killing(_ process: Process, after seconds: TimeInterval) -> DispatchWorkItem {
    let pid = process.processIdentifier
    let item = DispatchWorkItem { [weak process] in
        guard let process, process.isRunning else { return }
        FileHandle.standardError.write(
            Data("test support: killing \(process.executableURL?.path ?? "?") (pid \(pid)) after \(Int(seconds)) s\n".utf8))
        kill(pid, SIGKILL)
    }
    DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: item)
    return item
}

/// A process for `executable`, not yet started: the test's environment without `TRUCE_STORE`, then `environment` over it.
private func makeProcess(_ executable: String, _ arguments: [String], environment: [String: String], directory: String?) -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    var env = ProcessInfo.processInfo.environment
    env.removeValue(forKey: "TRUCE_STORE")
    env.merge(environment) { $1 }
    process.environment = env
    if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
    return process
}

/// Runs the real `git` in `directory` with no system or user configuration, so that settings there
/// (`merge.conflictStyle`, say) cannot change what it prints; it looks for no repository above `directory`'s parent.
public func gitWithoutUserConfig(_ arguments: [String], in directory: String) async throws -> ProcessResult {
    try await runAsync(
        "/usr/bin/env", ["git"] + arguments,
        environment: [
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
            "GIT_CEILING_DIRECTORIES": URL(fileURLWithPath: directory).deletingLastPathComponent().path,
        ], directory: directory)
}

/// Runs the real `git` with `arguments`, as the oracle for what Truce wrote.
public func git(_ arguments: [String], input: Data = Data()) throws -> ProcessResult {
    try run("/usr/bin/env", ["git"] + arguments, input: input)
}

/// The `truce` executable built next to the test bundle.
public let truceExecutable: String = {
    let candidates = [
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("truce").path,
        Bundle.main.bundleURL.appendingPathComponent("truce").path,
        packageRoot.appendingPathComponent(".build/debug/truce").path,
    ]
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates.last!
}()

/// The package's root directory, found from this source file.
public let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// Runs `truce` with `arguments` against `store` (through `--store`).
public func truce(_ arguments: [String], store: String? = nil, input: Data = Data(), environment: [String: String] = [:]) throws -> ProcessResult {
    try run(truceExecutable, (store.map { ["--store", $0] } ?? []) + arguments, input: input, environment: environment)
}

/// Runs the real `git` with `arguments`.
public func git(_ arguments: String..., input: Data = Data()) throws -> ProcessResult {
    try git(arguments, input: input)
}
