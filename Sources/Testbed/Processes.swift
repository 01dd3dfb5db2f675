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
    try ChildProcess.run(
        executable, arguments, input: input, environment: childEnvironment(environment), directory: directory,
        deadline: childProcessDeadline)
}

/// Runs `executable` like `run`, on a thread of its own rather than one of the concurrency pool's, which a
/// waiting child would otherwise hold.
public func runAsync(
    _ executable: String, _ arguments: [String], input: Data = Data(), environment: [String: String] = [:],
    directory: String? = nil
) async throws -> ProcessResult {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(
                with: Result { try run(executable, arguments, input: input, environment: environment, directory: directory) })
        }
    }
}

/// How long `run` and `runAsync` let a child run before killing it: far beyond any command a test runs, so that a
/// child that hangs ends as a failed test (its status is SIGKILL's) rather than a suite that never finishes.
public let childProcessDeadline: TimeInterval = 600

/// The test's environment without `TRUCE_STORE`, then `environment` over it.
private func childEnvironment(_ environment: [String: String]) -> [String: String] {
    var result = ProcessInfo.processInfo.environment
    result.removeValue(forKey: "TRUCE_STORE")
    result.merge(environment) { $1 }
    return result
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
