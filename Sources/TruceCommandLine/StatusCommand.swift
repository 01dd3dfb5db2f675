import Truce

struct StatusCommand: Command {
    static let name = "status"
    static let synopsis = "truce status"
    static let summary = "list the documents in conflict"
    static let options: [Option] = [.json]

    static func run(_ invocation: Invocation) async throws -> ExitCode {
        try invocation.rejectExtraPositionals(beyond: 0)
        let inConflict = try invocation.openStore().documentsInConflict()
        if invocation.wantsJSON {
            try invocation.output.json(["inConflict": inConflict.map(VersionsReport.init)])
        } else if inConflict.isEmpty {
            invocation.output.out("no documents in conflict")
        } else {
            for versions in inConflict {
                invocation.output.out("\(versions.key): in conflict (\(versions.heads.count) heads)")
            }
        }
        return .success
    }
}
