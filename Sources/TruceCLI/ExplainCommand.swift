import Truce

struct ExplainCommand: Command {
    static let name = "explain"
    static let synopsis = "truce explain DOC"
    static let summary = "say why the current version is current and what would settle a conflict"
    static let options: [Option] = [.json]

    static func run(_ invocation: Invocation) throws -> ExitCode {
        try invocation.rejectExtraPositionals(beyond: 1)
        let explanation = try invocation.openStore().explain(invocation.key())
        if invocation.wantsJSON {
            try invocation.output.json(ExplainReport(explanation))
            return .success
        }
        var lines = VersionsCommand.lines(for: explanation.versions)
        lines.append("why current: \(explanation.currentReason)")
        lines.append("rule: the head with the latest author date is current; on a tie, the larger version id")
        lines.append("merge attribute: \(explanation.mergeAttribute) (from the store's info/attributes)")
        invocation.output.out(lines.joined(separator: "\n"))
        return .success
    }
}

struct ExplainReport: Encodable {
    let versions: VersionsReport
    let currentReason: String
    let mergeAttribute: String

    init(_ explanation: Explanation) {
        versions = VersionsReport(explanation.versions)
        currentReason = explanation.currentReason
        mergeAttribute = explanation.mergeAttribute.description
    }
}
