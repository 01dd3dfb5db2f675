import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Seconds `body` takes on the monotonic clock.
func seconds(_ body: () throws -> Void) rethrows -> Double {
    let clock = ContinuousClock()
    return try clock.measure(body).seconds
}

/// Seconds `body` takes on the monotonic clock, for work that awaits.
func secondsAwaiting(_ body: () async throws -> Void) async rethrows -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    try await body()
    return (clock.now - start).seconds
}

/// The best of `runs` timings: the least disturbed by other work on a shared machine.
func bestOf(_ runs: Int, _ body: () throws -> Void) rethrows -> Double {
    var best = Double.infinity
    for _ in 0..<runs { best = min(best, try seconds(body)) }
    return best
}

/// The middle of `values` (the mean of the two middle ones for an even count): a figure one disturbed run cannot move.
func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

func median(_ values: [Int]) -> Double { median(values.map(Double.init)) }

/// A tiny lock-protected counter (the benchmark needs nothing more).
final class Atomic: @unchecked Sendable {
    private var value: Int
    private let lock = NSLock()
    init(_ value: Int) { self.value = value }
    /// Returns the value, then adds one.
    func add() -> Int {
        lock.lock()
        defer { lock.unlock() }
        value += 1
        return value - 1
    }
}

/// Work a row measures that did not do what it should: the row fails with this, rather than timing a failure.
struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// What a finished child process left.
struct ChildResult {
    let status: Int32
    let output: Data
    /// The child's peak resident memory, from `wait4`'s rusage.
    let peakBytes: Int
    /// From spawning the child to its exit, on the monotonic clock; for `runChildMeasuringPeak`, timed by the
    /// process in between, so its own start is not charged to the child.
    var seconds: Double = 0
}

/// Runs `executable` as `runChild` does, its peak memory measured from a small process in between.
///
/// Linux counts in a process's `ru_maxrss` the peak of the memory it had before `exec`, and
/// `posix_spawn` starts the child in the bench's own memory: measured directly, every child
/// would peak at least at the bench's peak (the corpus it built). A fresh bench process
/// (`--peak-of`), a few MB, spawns the child instead and reports what `wait4` gave it, and the time from
/// spawn to exit: timed from outside, the child would carry the start of that process too, a constant that
/// flatters every ratio against a peer timed directly.
func runChildMeasuringPeak(_ executable: String, _ arguments: [String], inputFile: String? = nil) -> ChildResult {
    let measureFile = FileManager.default.temporaryDirectory.appendingPathComponent("truce-bench-peak-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: measureFile) }
    let child = runChild(CommandLine.arguments[0], ["--peak-of", measureFile, executable] + arguments, inputFile: inputFile)
    let measured = ((try? String(contentsOfFile: measureFile, encoding: .utf8)) ?? "").split(separator: " ")
    return ChildResult(
        status: child.status, output: child.output, peakBytes: measured.first.flatMap { Int($0) } ?? 0,
        seconds: measured.dropFirst().first.flatMap { Double($0) } ?? 0)
}

/// `truce-bench --peak-of FILE EXECUTABLE ARGUMENTS...`: runs the command with this process's standard files,
/// writes its peak resident bytes and its seconds from spawn to exit to FILE ("BYTES SECONDS") and exits with
/// its status; the bench's `runChildMeasuringPeak` uses it.
func peakOf(_ arguments: [String]) -> Never {
    guard arguments.count >= 2 else { exit(2) }
    let argv = arguments.dropFirst().map { strdup($0) } + [nil]
    var pid: pid_t = 0
    var status: Int32 = 0
    var usage = rusage()
    var spawned = true
    let time = seconds {
        spawned = posix_spawnp(&pid, arguments[1], nil, nil, argv, environ) == 0
        if spawned { wait4(pid, &status, 0, &usage) }
    }
    guard spawned else { exit(126) }
    _ = FileManager.default.createFile(atPath: arguments[0], contents: Data("\(usage.ru_maxrss * 1024) \(time)".utf8))
    exit((status & 0x7F) == 0 ? (status >> 8) & 0xFF : 125)
}

/// Runs `executable` with `arguments` (stdin from `input` file or /dev/null), collecting stdout and peak memory.
@discardableResult
func runChild(_ executable: String, _ arguments: [String], inputFile: String? = nil, environment: [String: String] = [:]) -> ChildResult {
    let output = FileManager.default.temporaryDirectory.appendingPathComponent("truce-bench-\(UUID().uuidString)").path
    _ = FileManager.default.createFile(atPath: output, contents: nil)
    defer { try? FileManager.default.removeItem(atPath: output) }
    var actions: posix_spawn_file_actions_t = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, inputFile ?? "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_TRUNC, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    var env = ProcessInfo.processInfo.environment
    env.merge(environment) { $1 }
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { for pointer in argv + envp { free(pointer) } }
    var pid: pid_t = 0
    guard posix_spawnp(&pid, executable, &actions, nil, argv, envp) == 0 else { return ChildResult(status: -1, output: Data(), peakBytes: 0) }
    var status: Int32 = 0
    var usage = rusage()
    wait4(pid, &status, 0, &usage)
    let exitStatus = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : -1
    return ChildResult(status: exitStatus, output: FileManager.default.contents(atPath: output) ?? Data(), peakBytes: usage.ru_maxrss * 1024)
}

/// Runs a shell script in `directory` and returns its exit status.
@discardableResult
func shell(_ script: String, directory: String) -> Int32 {
    runChild("/bin/sh", ["-c", "cd \"$BENCH_DIRECTORY\" && " + script], environment: ["BENCH_DIRECTORY": directory]).status
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
