import Truce

struct LogCommand: Command {
    static let name = "log"
    static let synopsis = "truce log DOC"
    static let summary = "show the history of DOC, newest first, resolutions included"
    static let options: [Option] = [.json]

    static func run(_ invocation: Invocation) async throws -> ExitCode {
        try invocation.rejectExtraPositionals(beyond: 1)
        let store = try invocation.openStore()
        let history = try store.history(of: invocation.key())
        if invocation.wantsJSON {
            try invocation.output.json(history)
            return .success
        }
        let runBy = try store.resolutionAuthors(of: history)
        for version in history {
            var marks: [String] = []
            // Who ran a resolution is not in its commit (replicas agree on its id), but this store's journal has it.
            if let author = runBy[version.id], author != version.deviceName { marks.append("run here by \(author)") }
            if version.isConflict { marks.append("conflict") }
            if version.isResolved { marks.append("resolved") }
            let suffix = marks.isEmpty ? "" : "  [\(marks.joined(separator: ", "))]"
            invocation.output.out(describe(version) + suffix)
        }
        return .success
    }
}
