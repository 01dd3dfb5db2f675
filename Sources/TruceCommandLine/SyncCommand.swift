import Foundation
import Truce

struct SyncCommand: Command {
    static let name = "sync"
    static let synopsis = "truce sync REMOTE [--resolve] [--device NAME]"
    static let summary = "exchange versions with another store (a path, file://, ssh or https URL)"
    static let options: [Option] = [
        .flag("--resolve", help: "settle what the sync left in conflict with the resolvers that decide on their own"), .device, .json,
    ]

    static func run(_ invocation: Invocation) async throws -> ExitCode {
        try invocation.rejectExtraPositionals(beyond: 1)
        let remote = try invocation.positional(0, "REMOTE")
        let resolving = invocation.arguments.has("--resolve")
        let store = try invocation.openStore()
        let progress = ProgressLine(output: invocation.output)
        // A progress line only on a terminal: scripts and pipes get the summary alone.
        let report = try await store.sync(
            with: remote, resolving: resolving, device: invocation.device(),
            progress: progress.map { line in { @Sendable traffic in line.show(traffic) } })
        progress?.finish()
        // With --resolve, what still needs a person is exit 1, as for `resolve --all`.
        let status: ExitCode = resolving && !report.needsPerson.isEmpty ? .needsPerson : .success
        if invocation.wantsJSON {
            try invocation.output.json(report)
        } else {
            // Said every time: a person sees that nothing left the device in the clear.
            let sealed = store.isEncryptedHub(remote) ? " (encrypted hub)" : ""
            invocation.output.out("received \(report.receivedCount) version(s), sent \(report.sent)\(sealed)")
            for key in report.resolved { invocation.output.out("\(key): resolved") }
            for key in report.inConflict {
                invocation.output.out("\(key): in conflict" + (report.needsPerson.contains(key) ? ", needs a person" : ""))
            }
        }
        // The good heads are in; the refused ones are a failure of the store they come from, one line each.
        for head in report.refused { invocation.output.error("refused head \(head.hex) from \(report.remote): \(head.reason)") }
        for head in report.refusedByRemote { invocation.output.error("\(report.remote) refused head \(head.hex): \(head.reason)") }
        return report.refused.isEmpty && report.refusedByRemote.isEmpty ? status : .storeFailure
    }
}

/// The sync's running traffic on one terminal line, redrawn at most ten times a second.
final class ProgressLine: @unchecked Sendable {
    private let output: Output
    private let lock = NSLock()
    private var last = SyncReport.Traffic(), lastDrawn = Date.distantPast

    /// A progress line when stderr is a terminal, nil otherwise.
    init?(output: Output) {
        guard isatty(STDERR_FILENO) == 1 else { return nil }
        self.output = output
    }

    func show(_ traffic: SyncReport.Traffic) {
        lock.withLock {
            last = traffic
            guard Date().timeIntervalSince(lastDrawn) >= 0.1 else { return }
            draw()
        }
    }

    /// Draws the final counts and ends the line.
    func finish() {
        lock.withLock {
            draw()
            output.writeError(Data("\n".utf8))
        }
    }

    private func draw() {
        lastDrawn = Date()
        output.progress(Self.describe(last))
    }

    static func describe(_ traffic: SyncReport.Traffic) -> String {
        // The checks and the writing after a download: a first sync's longest steps, silent on the wire.
        let checked = traffic.headsToCheck > 0 ? ", \(traffic.headsChecked) of \(traffic.headsToCheck) heads checked" : ""
        let stored = traffic.objectsToStore > 0 ? ", \(traffic.objectsStored) of \(traffic.objectsToStore) objects stored" : ""
        return "received \(traffic.receivedObjects) objects (\(bytes(traffic.receivedBytes)))\(checked)\(stored), "
            + "sent \(traffic.sentObjects) objects (\(bytes(traffic.sentBytes))), \(traffic.documentsAdopted) document(s) adopted"
    }

    private static func bytes(_ count: Int) -> String {
        count < 1024
            ? "\(count) B"
            : count < 1024 * 1024
                ? String(format: "%.1f KiB", Double(count) / 1024)
                : String(format: "%.1f MiB", Double(count) / 1024 / 1024)
    }
}
