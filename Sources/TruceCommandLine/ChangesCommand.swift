import Truce

struct ChangesCommand: Command {
    static let name = "changes"
    static let synopsis = "truce changes [--since TOKEN] [--exclude-author NAME]"
    static let summary = "list every save, deletion and resolution after TOKEN (default: from the start), then the new token"
    static let options: [Option] = [
        .value("--since", help: "the token a previous 'changes' printed"),
        excludeAuthor,
        .json,
    ]
    static let excludeAuthor = Option.value("--exclude-author", help: "leave out the changes this device made")

    static func run(_ invocation: Invocation) async throws -> ExitCode {
        try invocation.rejectExtraPositionals(beyond: 0)
        let arguments = invocation.arguments
        var token = ChangeHistory.Token.beginning
        if let text = arguments.value("--since") {
            guard let parsed = ChangeHistory.Token(text) else {
                throw TruceError.invalidToken(text, reason: "it is not a token 'truce changes' printed")
            }
            token = parsed
        }
        let history = try invocation.openStore().changes(since: token, excludingAuthor: arguments.value("--exclude-author"))
        if invocation.wantsJSON {
            try invocation.output.json(history)
            return .success
        }
        for change in history.changes {
            invocation.output.out("\(change.kind.rawValue)  \(change.version.hex)  \(ISO8601.format(change.date))  \(change.author)  \(change.key)")
        }
        invocation.output.out("token: \(history.token)")
        return .success
    }
}
