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
            return .success
        }
        invocation.output.out("received \(report.received.count) version(s), sent \(report.sent)")
        for key in report.inConflict { invocation.output.out("\(key): in conflict") }
        return .success
    }
}
