import Truce

struct ReopenCommand: Command {
    static let name = "reopen"
    static let synopsis = "truce reopen DOC [--device NAME]"
    static let summary = "undo the last resolution: the versions it settled are heads again"
    static let options: [Option] = [.device, .json]

    static func run(_ invocation: Invocation) async throws -> ExitCode {
        try invocation.rejectExtraPositionals(beyond: 1)
        let versions = try invocation.openStore().reopen(invocation.key(), device: invocation.device())
        if invocation.wantsJSON {
            try invocation.output.json(VersionsReport(versions))
        } else {
            invocation.output.out(VersionsCommand.lines(for: versions).joined(separator: "\n"))
        }
        return .success
    }
}
