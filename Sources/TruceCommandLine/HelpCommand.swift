struct HelpCommand: Command {
    static let name = "help"
    static let synopsis = "truce help [COMMAND]"
    static let summary = "show the commands, or one command's usage and options"
    static let options: [Option] = []

    static func run(_ invocation: Invocation) async throws -> ExitCode {
        try invocation.rejectExtraPositionals(beyond: 1)
        guard let name = invocation.arguments.positionals.first else {
            invocation.output.out(overview(toolName: invocation.output.toolName))
            return .success
        }
        guard let command = CommandLineTool.commands.first(where: { $0.name == name }) else {
            throw UsageError("no command named '\(name)'")
        }
        invocation.output.out(help(for: command, toolName: invocation.output.toolName))
        return .success
    }

    static func overview(toolName: String) -> String {
        let commands = CommandLineTool.commands
        let width = commands.map { $0.name.count }.max() ?? 0
        let rows = commands.map { command in "  " + pad(command.name, to: width + 2) + command.summary }
        return
            (["usage: \(toolName) [--store DIR] COMMAND [ARGS] [--json]", "", "commands:"] + rows + [
                "",
                "The store is --store DIR, else $TRUCE_STORE, else ./.truce.",
                "Exit codes: 0 done, 1 a person is needed, 2 bad usage or input, 3 the store or file system failed.",
                "See '\(toolName) help COMMAND' for one command.",
            ]).joined(separator: "\n")
    }

    static func help(for command: any Command.Type, toolName: String) -> String {
        let options = command.options + [.store, .help]
        let spellings = options.map { $0.names.joined(separator: ", ") }
        let width = spellings.map(\.count).max() ?? 0
        let rows = zip(spellings, options).map { spelling, option in "  " + pad(spelling, to: width + 2) + option.help }
        // Synopses are written for `truce`; an app's own tool shows its own name.
        let synopsis = command.synopsis.hasPrefix("truce ") ? toolName + command.synopsis.dropFirst(5) : command.synopsis
        let details = command.details.map { ["", $0.replacingOccurrences(of: "truce ", with: toolName + " ")] } ?? []
        return (["usage: \(synopsis)", "", command.summary, "", "options:"] + rows + details).joined(separator: "\n")
    }

    private static func pad(_ text: String, to width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - text.count))
    }
}
