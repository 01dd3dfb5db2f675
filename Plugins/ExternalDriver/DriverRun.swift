import Foundation
import Synchronization
import TruceCore

/// One run of a driver: `/bin/sh -c COMMAND` in a fresh private directory holding the three files, with a deadline.
struct DriverRun {
    /// What the run gave.
    enum Outcome: Equatable {
        /// Exit 0 and a result written to `%A`.
        case merged(Data)
        /// Anything else, in words: conflicts remain, or the driver misbehaved. Nothing is taken from it.
        case unmerged(String)
    }

    let driver: String
    let command: DriverCommand
    let template: String
    let timeout: Double

    /// The date `%A` carries before the run, so that a driver that never wrote it can be told from one that wrote the same bytes.
    private static let untouchedDate = Date(timeIntervalSince1970: 1)

    /// Runs the driver until it ends, `deadline` passes or the task is cancelled; on either of the last two its process group is killed.
    func run(base: Data, current: Data, other: Data, deadline: ContinuousClock.Instant) async throws -> Outcome {
        let files = FileManager.default
        let root = files.temporaryDirectory.appendingPathComponent("truce-driver-\(UUID().uuidString)")
        let work = root.appendingPathComponent("work")
        defer { try? files.removeItem(at: root) }
        let currentPath = work.appendingPathComponent(DriverCommand.currentFile).path
        let errorLog = root.appendingPathComponent("stderr")
        let before: [FileAttributeKey: Any]
        do {
            for directory in [root, work] {
                try files.createDirectory(at: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            }
            try base.write(to: work.appendingPathComponent(DriverCommand.baseFile))
            try current.write(to: URL(fileURLWithPath: currentPath))
            try other.write(to: work.appendingPathComponent(DriverCommand.otherFile))
            try Data().write(to: errorLog)
            try files.setAttributes([.modificationDate: Self.untouchedDate], ofItemAtPath: currentPath)
            before = try files.attributesOfItem(atPath: currentPath)
        } catch {
            throw TruceError.resolverFailed(driver, reason: "could not prepare its temporary files: \(error.localizedDescription)")
        }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command.expand(template)]
        process.currentDirectoryURL = work
        let ending = ProcessEnding()
        process.terminationHandler = { _ in ending.ended() }
        do {
            process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/dev/null"))
            // stdout is Truce's own channel (`--json`), so the driver's goes nowhere; its stderr explains a failure.
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: "/dev/null"))
            process.standardError = try FileHandle(forWritingTo: errorLog)
            try process.run()
        } catch {
            throw TruceError.resolverFailed(driver, reason: "could not start /bin/sh: \(error.localizedDescription)")
        }
        // Foundation on Linux reports the end only once every process the driver started has gone, so one left running counts too.
        let runDeadline = min(deadline, ContinuousClock.now + .seconds(timeout))
        if await !ending.wait(until: runDeadline, orElse: { Self.killGroup(of: process) }) {
            // Cancelled before its time: the store no longer wants an answer.
            if ContinuousClock.now < runDeadline { throw CancellationError() }
            return .unmerged("it (or a process it started) ran longer than its timeout of \(Self.seconds(timeout)) and was killed")
        }
        let stderr = Self.lastLine(of: files.contents(atPath: errorLog.path) ?? Data())
        switch (process.terminationReason, process.terminationStatus) {
        case (.uncaughtSignal, let signal):
            return .unmerged("it was killed by signal \(signal)" + stderr)
        case (.exit, let status) where status != 0:
            return .unmerged("it exited with status \(status): conflicts remain" + stderr)
        default:
            return Self.result(at: currentPath, before: before, original: current)
        }
    }

    /// Reads `%A` after a clean exit; a result that was removed, replaced by something else or never written is no result.
    private static func result(at path: String, before: [FileAttributeKey: Any], original: Data) -> Outcome {
        guard let after = try? FileManager.default.attributesOfItem(atPath: path) else {
            return .unmerged("it exited 0 but removed its result file %A")
        }
        // A symbolic link here could point anywhere; only a plain file is a result.
        guard after[.type] as? FileAttributeType == .typeRegular, let content = FileManager.default.contents(atPath: path) else {
            return .unmerged("it exited 0 but replaced its result file %A with something that is not a file")
        }
        let untouched =
            after[.modificationDate] as? Date == untouchedDate
            && after[.systemFileNumber].map { "\($0)" } == before[.systemFileNumber].map { "\($0)" } && content == original
        if untouched { return .unmerged("it exited 0 without writing its result to %A") }
        return .merged(content)
    }

    /// Kills the driver's whole process group (Foundation starts each child in its own), so no grandchild outlives the deadline.
    private static func killGroup(of process: Process) {
        let pid = process.processIdentifier
        if getpgid(pid) == pid { kill(-pid, SIGKILL) } else { kill(pid, SIGKILL) }
    }

    /// The last line the driver wrote to stderr, after a colon, on one line and not too long.
    private static func lastLine(of data: Data) -> String {
        let text = String(decoding: data, as: UTF8.self)
        guard let line = text.split(whereSeparator: \.isNewline).last(where: { !$0.allSatisfy(\.isWhitespace) }) else { return "" }
        let printable = String(line.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : Character($0) })
        let trimmed = printable.trimmingCharacters(in: .whitespaces)
        return " (stderr: \(trimmed.count > 160 ? trimmed.prefix(160) + "…" : trimmed))"
    }

    static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }
}

/// The end of a driver's process, which `Process.terminationHandler` reports: awaited, so no thread is parked on it.
private final class ProcessEnding: Sendable {
    private struct State {
        var hasEnded = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    /// Called by the termination handler: wakes every waiter, now and later.
    func ended() {
        let waiters = state.withLock { state in
            state.hasEnded = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the process has ended.
    func wait() async {
        await withCheckedContinuation { continuation in
            let hasEnded = state.withLock { state in
                if !state.hasEnded { state.waiters.append(continuation) }
                return state.hasEnded
            }
            if hasEnded { continuation.resume() }
        }
    }

    /// True when the process ended by `deadline`; else (the deadline passed, or the task was cancelled) runs `stop`,
    /// which must end the process, waits for that end, and returns false.
    func wait(until deadline: ContinuousClock.Instant, orElse stop: @escaping @Sendable () -> Void) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await self.wait()
                return true
            }
            group.addTask {
                // Returns at the deadline, or at once when cancelled (the process ended first, or the caller gave up).
                try? await Task.sleep(until: deadline, clock: .continuous)
                return false
            }
            let inTime = await group.next() ?? false
            if !inTime { stop() }
            group.cancelAll()
            // The end of a process just killed comes in milliseconds; its files are read only after it.
            await group.waitForAll()
            return inTime
        }
    }
}
