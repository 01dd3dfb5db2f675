import Truce

struct ExportCommand: Command {
    static let name = "export"
    static let synopsis = "truce export DIR [--version-at ISO8601] [--force]"
    static let summary = "write the current version of every document into DIR as files (exit 1 if some are in conflict)"
    static let options: [Option] = [
        .value("--version-at", help: "write each document's version current at this date (by author date) instead"),
        .flag("--force", help: "write into DIR even when it is not empty (files of the same name are replaced)"), .json,
    ]

    static func run(_ invocation: Invocation) async throws -> ExitCode {
        try invocation.rejectExtraPositionals(beyond: 1)
        let folder = try invocation.positional(0, "DIR")
        let date = try invocation.date(option: "--version-at")
        let output = invocation.output
        let progress = CountProgress(output: output, doing: "exporting documents")
        let report = try await invocation.openStore().exportDocuments(
            into: folder, versionAt: date, overwrite: invocation.arguments.has("--force"), progress: progress?.callback)
        progress?.finish()
        for issue in report.failed { output.error("cannot write \(issue)") }
        for key in report.inConflict { output.error("in conflict, written as its current version: \(key)") }
        if invocation.wantsJSON {
            try output.json(report)
        } else {
            output.out("exported \(count(report.written, "document")) to \(folder); \(count(report.deleted)) deleted, not written")
        }
        if !report.failed.isEmpty { return .storeFailure }
        return report.inConflict.isEmpty ? .success : .needsPerson
    }
}
