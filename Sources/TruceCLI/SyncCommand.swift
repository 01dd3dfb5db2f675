import Truce

struct SyncCommand: Command {
    static let name = "sync"
    static let synopsis = "truce sync REMOTE [--resolve] [--device NAME]"
    static let summary = "exchange versions with another store (a path, file://, ssh or https URL)"
    static let options: [Option] = [
        .flag("--resolve", help: "settle what the sync left in conflict with the resolvers that decide on their own"), .device, .json,
    ]

    static func run(_ invocation: Invocation) throws -> ExitCode {
        try invocation.rejectExtraPositionals(beyond: 1)
        let remote = try invocation.positional(0, "REMOTE")
        let resolving = invocation.arguments.has("--resolve")
        let report = try invocation.openStore().sync(with: remote, resolving: resolving ? .standard : nil, device: invocation.device())
        // With --resolve, what still needs a person is exit 1, as for `resolve --all`.
        let status: ExitCode = resolving && !report.needsPerson.isEmpty ? .needsPerson : .success
        if invocation.wantsJSON {
            try invocation.output.json(report)
            return status
        }
        invocation.output.out("received \(report.received.count) version(s), sent \(report.sent)")
        for key in report.resolved { invocation.output.out("\(key): resolved") }
        for key in report.inConflict { invocation.output.out("\(key): in conflict" + (report.needsPerson.contains(key) ? ", needs a person" : "")) }
        return status
    }
}
