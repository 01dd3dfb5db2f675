import Foundation
import Truce

struct PruneCommand: Command {
    static let name = "prune"
    static let synopsis = "truce prune [--now | --expire DURATION]"
    static let summary = "reclaim the space of everything no head, resolution history or recent reflog entry needs"
    static let options: [Option] = [
        .flag("--now", help: "no grace period (unsafe while other processes write, as with git gc --prune=now)"),
        .value("--expire", help: "keep what became unneeded within DURATION (default 2.weeks; e.g. 3.days, 1.hour, never)"),
        .json,
    ]

    static func run(_ invocation: Invocation) async throws -> ExitCode {
        try invocation.rejectExtraPositionals(beyond: 0)
        let arguments = invocation.arguments
        if arguments.has("--now"), arguments.value("--expire") != nil { throw UsageError("give --now or --expire, not both") }
        var expire = Expiry.defaultGrace
        if arguments.has("--now") { expire = 0 }
        if let text = arguments.value("--expire") {
            guard let parsed = ExpiryArgument.parse(text) else {
                throw InputError("invalid expiry '\(text)': expected now, never, or a count and a unit such as 2.weeks or 3.days")
            }
            expire = parsed
        }
        let store = try invocation.openStore()
        let output = invocation.output
        // Progress only on a terminal: scripts and pipes get the summary alone.
        var progress: (@Sendable (String) -> Void)?
        if isatty(STDERR_FILENO) == 1 { progress = { @Sendable message in output.progress(message) } }
        let report = try await store.prune(expire: expire, progress: progress)
        if invocation.wantsJSON {
            try output.json(report)
            return .success
        }
        for key in report.droppedDocuments { output.out("dropped deleted document \(key)") }
        output.out(
            "packed \(report.packedObjects) objects, removed \(report.removedFiles) files, "
                + "\(report.bytesBefore) -> \(report.bytesAfter) bytes")
        return .success
    }
}
