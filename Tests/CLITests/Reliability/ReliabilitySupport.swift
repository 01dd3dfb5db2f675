import Foundation
import Synchronization
import TestSupport
import Testing

/// Sizes, seeds and store checks shared by the reliability harness.
///
/// The CI sizes keep the whole harness within a few minutes on two cores;
/// `HEAVY=1` runs bigger and longer. Every random choice comes from a
/// `SeededRandom` seeded with a fixed number, printed and named in every
/// failure; `RELIABILITY_SEED=<n>` replays or explores another one.
enum Reliability {
    static let isHeavy = ProcessInfo.processInfo.environment["HEAVY"] == "1"

    /// `ci` normally, `heavy` under `HEAVY=1`.
    static func size(ci: Int, heavy: Int) -> Int { isHeavy ? heavy : ci }

    /// `RELIABILITY_SEED` (decimal or 0x-hex) when set, else `fixed`; printed so a failing run can be replayed.
    static func seed(_ fixed: UInt64, for test: String) -> UInt64 {
        var seed = fixed
        if let text = ProcessInfo.processInfo.environment["RELIABILITY_SEED"] {
            let parsed = text.hasPrefix("0x") ? UInt64(text.dropFirst(2), radix: 16) : UInt64(text)
            if let parsed { seed = parsed }
        }
        print("reliability: \(test) seed \(seed) (replay with RELIABILITY_SEED=\(seed))\(isHeavy ? " HEAVY" : "")")
        return seed
    }

    /// What `git fsck --strict` finds wrong in `store`: empty when it exits 0 and says nothing but notices.
    ///
    /// Dangling objects (an unacknowledged save a kill cut short) are not
    /// problems; any other line git prints is.
    static func fsckProblems(_ store: String) throws -> [String] {
        let result = try git(["-C", store, "fsck", "--strict", "--no-dangling", "--no-progress"])
        var problems = result.errorLines.filter { !$0.hasPrefix("notice: HEAD points to an unborn branch") }
        problems += result.output.split(separator: "\n").map(String.init)
        if result.status != 0 { problems.insert("git fsck --strict exited \(result.status)", at: 0) }
        return problems
    }

    /// Every commit a head ref of `store` reaches: the heads, their history, and each resolution's ancestry.
    static func reachableVersions(in store: String) throws -> Set<String> {
        let result = try git(["-C", store, "rev-list", "--glob=refs/truce/heads/*"])
        guard result.status == 0 else { throw ReliabilityFailure("git rev-list failed: \(result.errorOutput)") }
        return Set(result.output.split(separator: "\n").map(String.init))
    }

    /// The commits a head ref of `store` reaches whose author is one of `authors`: the versions those devices saved.
    static func versions(byAuthors authors: Set<String>, in store: String) throws -> Set<String> {
        let result = try git(["-C", store, "log", "--glob=refs/truce/heads/*", "--format=%H %an"])
        guard result.status == 0 else { throw ReliabilityFailure("git log failed: \(result.errorOutput)") }
        return Set(
            result.output.split(separator: "\n").compactMap { line in
                let fields = line.split(separator: " ", maxSplits: 1).map(String.init)
                return fields.count == 2 && authors.contains(fields[1]) ? fields[0] : nil
            })
    }

    /// The files a write cut short leaves in `store`: lock files and the temporary files of packs and objects.
    ///
    /// Proof, with dangling objects, that a kill landed inside a write rather than before it started.
    static func interruptedWriteTraces(in store: String) -> [String] {
        guard let walker = FileManager.default.enumerator(atPath: store) else { return [] }
        return walker.compactMap { $0 as? String }.filter { path in
            let name = (path as NSString).lastPathComponent
            return name.hasSuffix(".lock") || name.hasPrefix("tmp") || name.hasPrefix("pack_git2_")
        }
    }

    /// The acknowledged versions no head ref of `store` reaches: lost ones. Empty when nothing was lost.
    static func lostVersions(_ acknowledged: Set<String>, in store: String) throws -> [String] {
        acknowledged.subtracting(try reachableVersions(in: store)).sorted()
    }

    /// The version ids `truce changes --json` lists for `store`.
    static func journaledVersions(in store: String) throws -> Set<String> {
        let result = try truce(["changes", "--json"], store: store)
        guard result.status == 0, let json = try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any],
            let changes = json["changes"] as? [[String: Any]]
        else { return [] }
        return Set(changes.compactMap { $0["version"] as? String })
    }

    /// A store made with `truce init` in `directory`, resolving `*.md` three-way and everything else as the test asks.
    static func makeStore(in directory: TemporaryDirectory, named name: String) throws -> String {
        let path = directory.file(name)
        let result = try truce(["init"], store: path)
        guard result.status == 0 else { throw ReliabilityFailure("truce init failed: \(result.errorOutput)") }
        try Data("*.md merge=three-way\n".utf8).write(to: URL(fileURLWithPath: path + "/info/attributes"))
        return path
    }

    /// The id `truce save` printed, nil unless it printed exactly one.
    static func savedID(_ output: String) -> String? {
        let text = output.trimmingCharacters(in: .whitespacesAndNewlines)
        return text.count == 40 && text.allSatisfy(\.isHexDigit) ? text : nil
    }

    /// The id of the resolution `truce resolve` wrote (`resolved DOC with NAME: <id>`), nil when it wrote none.
    static func resolutionID(_ output: String) -> String? {
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("resolved ") }),
            let id = line.split(separator: " ").last, id.count == 40
        else { return nil }
        return String(id)
    }

    /// True when a failed command said the store was busy: the one failure a writer may retry.
    static func isBusy(status: Int32, errorLines: [String]) -> Bool {
        status == 3 && errorLines.count == 1 && errorLines[0].contains("the store is busy")
    }
}

/// A harness step that could not even run (not a finding about Truce).
struct ReliabilityFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A flag one task raises and others poll.
final class ReliabilityFlag: Sendable {
    private let state = Mutex(false)
    var isRaised: Bool { state.withLock { $0 } }
    func raise() { state.withLock { $0 = true } }
}

/// A `truce` process started in the background, to be waited for or killed.
///
/// stdin, stdout and stderr are files, so a kill can never leave a pipe half
/// read, and whatever the process printed before it died can still be read.
final class BackgroundProcess {
    private let process = Process()
    private let files: URL
    let started = Date()
    /// When the process ended, noted as Foundation reaps it, so that a late `wait()` does not make a run look longer.
    private let ended = EndTime()

    init(_ arguments: [String], store: String, input: Data = Data(), environment extra: [String: String] = [:]) throws {
        files = FileManager.default.temporaryDirectory.appendingPathComponent("truce-bg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: files, withIntermediateDirectories: true)
        try input.write(to: files.appendingPathComponent("stdin"))
        for name in ["stdout", "stderr"] { try Data().write(to: files.appendingPathComponent(name)) }
        process.executableURL = URL(fileURLWithPath: truceExecutable)
        process.arguments = ["--store", store] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "TRUCE_STORE")
        // A crash then ends the process at once with its message, instead of waiting on Swift's backtracer, which a kill can leave stuck.
        environment["SWIFT_BACKTRACE"] = "enable=no"
        environment.merge(extra) { $1 }
        process.environment = environment
        process.standardInput = try FileHandle(forReadingFrom: files.appendingPathComponent("stdin"))
        process.standardOutput = try FileHandle(forWritingTo: files.appendingPathComponent("stdout"))
        process.standardError = try FileHandle(forWritingTo: files.appendingPathComponent("stderr"))
        process.terminationHandler = { [ended] _ in ended.note() }
        try process.run()
    }

    deinit { try? FileManager.default.removeItem(at: files) }

    /// Sends SIGKILL unless the process already ended; true when it was still running.
    @discardableResult
    func kill() -> Bool {
        guard process.isRunning else { return false }
        return Foundation.kill(process.processIdentifier, SIGKILL) == 0
    }

    /// Waits at most `seconds` for the end; a process still running then is killed and nil returned.
    func wait(upTo seconds: TimeInterval) -> Ending? {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if kill() {
            _ = wait()
            return nil
        }
        return wait()
    }

    /// What it printed on stdout so far, while it runs.
    var outputSoFar: String { String(decoding: (try? Data(contentsOf: files.appendingPathComponent("stdout"))) ?? Data(), as: UTF8.self) }

    /// What it printed on stderr so far, while it runs.
    var errorOutputSoFar: String { String(decoding: (try? Data(contentsOf: files.appendingPathComponent("stderr"))) ?? Data(), as: UTF8.self) }

    /// Sends `number` (SIGTERM, SIGINT, …) to the process by its pid.
    func signal(_ number: Int32) { Foundation.kill(process.processIdentifier, number) }

    /// Waits for the end with a deadline: throws `DeadlinePassed` when the process still runs after `seconds`.
    func wait(within seconds: Double) async throws -> Ending {
        try await waitUntil("process \(process.processIdentifier) to end", within: seconds) { !process.isRunning }
        return wait()
    }

    /// Waits for the end and returns what the process left; after `limit`, kills it and says so in `overran`.
    func wait(limit: TimeInterval = 60) -> Ending {
        let deadline = Date().addingTimeInterval(limit)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        let overran = process.isRunning
        if overran { kill() }
        process.waitUntilExit()
        let stdout = (try? Data(contentsOf: files.appendingPathComponent("stdout"))) ?? Data()
        let stderr = (try? Data(contentsOf: files.appendingPathComponent("stderr"))) ?? Data()
        return Ending(
            killed: process.terminationReason == .uncaughtSignal, overran: overran, status: process.terminationStatus,
            output: String(decoding: stdout, as: UTF8.self), errorOutput: String(decoding: stderr, as: UTF8.self),
            seconds: (ended.date ?? Date()).timeIntervalSince(started))
    }

    /// The moment a process ended, once it has (the handler that notes it may run just after `waitUntilExit` returns).
    final class EndTime: Sendable {
        private let noted = Mutex<Date?>(nil)
        var date: Date? { noted.withLock { $0 } }
        func note() { noted.withLock { $0 = Date() } }
    }

    /// How a background process ended.
    struct Ending {
        /// True when a signal, not an exit, ended it; `status` is then the signal.
        let killed: Bool
        /// True when it was still running at the wait's deadline, and so was killed there.
        let overran: Bool
        let status: Int32
        let output: String
        let errorOutput: String
        /// From start to end (to the exit or the kill, not to the `wait()`).
        let seconds: TimeInterval

        var errorLines: [String] { errorOutput.split(separator: "\n").map(String.init) }
    }
}
