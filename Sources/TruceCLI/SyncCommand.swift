import Truce

struct SyncCommand: Command {
    static let name = "sync"
    static let synopsis = "truce sync REMOTE"
    static let summary = "exchange versions with another store (a path, file://, ssh or https URL)"
    static let options: [Option] = [.json]

    static func run(_ invocation: Invocation) throws -> ExitCode {
        try invocation.rejectExtraPositionals(beyond: 1)
        let remote = try invocation.positional(0, "REMOTE")
        let report = try invocation.openStore().sync(with: remote)
        if invocation.wantsJSON {
            try invocation.output.json(report)
        } else {
            invocation.output.out("received \(report.received.count) version(s), sent \(report.sent)")
            for key in report.inConflict { invocation.output.out("\(key): in conflict") }
        }
        // The good heads are in; the refused ones are a failure of the store they come from, one line each.
        for head in report.refused { invocation.output.error("refused head \(head.version) from \(remote): \(head.reason)") }
        for head in report.refusedByRemote { invocation.output.error("\(remote) refused head \(head.version): \(head.reason)") }
        return report.refused.isEmpty && report.refusedByRemote.isEmpty ? .success : .storeFailure
    }
}
