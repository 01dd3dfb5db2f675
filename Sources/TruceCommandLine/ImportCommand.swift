import Foundation
import Truce

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

struct ImportCommand: Command {
    static let name = "import"
    static let synopsis = "truce import DIR|- [--device NAME] [--date ISO8601 [--allow-future-date]] [--prefix KEY/]"
    static let summary = "save every file under DIR (or the records of a stream on standard input) as documents, in batches of up to 131,072"
    static let options: [Option] = [
        .device, .date, .allowFutureDate, .value("--prefix", help: "put every key under this folder (notes/ makes a.txt notes/a.txt)"), .json,
    ]

    static func run(_ invocation: Invocation) async throws -> ExitCode {
        try invocation.rejectExtraPositionals(beyond: 1)
        let folder = try invocation.positional(0, "DIR (or - for a stream on standard input)")
        let (device, date) = try (invocation.device(), invocation.date())
        let prefix = invocation.arguments.value("--prefix") ?? ""
        let source: ImportSource =
            folder == "-"
            ? try .stream(reading: FileHandle.standardInput, prefix: prefix)
            : try .folder(at: folder, prefix: prefix, excluding: invocation.storePath())
        let store = try invocation.openStore()
        let output = invocation.output
        let showsProgress = isatty(STDERR_FILENO) == 1
        let saving = CountProgress(output: output, doing: "saving versions")
        let report = try await store.importDocuments(
            source, device: device, date: date, allowingFutureDate: invocation.allowsFutureDate,
            progress: showsProgress
                ? { @Sendable read, total in
                    output.progress(read < total ? "reading files: \(count(read)) of \(count(total))" : "read \(count(total)) files; saving…")
                } : nil,
            saving: saving?.callback)
        if showsProgress { output.progress("") }
        for issue in report.skipped { output.error("note: skipped \(issue)") }
        for issue in report.refused { output.error("refused \(issue)") }
        if invocation.wantsJSON {
            try output.json(report)
        } else {
            output.out(
                "imported \(count(report.documents, "document")): \(count(report.newVersions, "new version")), "
                    + "\(count(report.unchanged)) unchanged, \(count(report.refused.count)) refused")
        }
        return report.refused.isEmpty ? .success : .badInput
    }
}

/// `n` with thousands separators (9,812), and `noun` after it in the singular or plural.
func count(_ n: Int, _ noun: String? = nil) -> String {
    let digits = String(n)
    var grouped = ""
    for (index, digit) in digits.enumerated() {
        if index > 0, (digits.count - index) % 3 == 0 { grouped += "," }
        grouped.append(digit)
    }
    guard let noun else { return grouped }
    return "\(grouped) \(noun)\(n == 1 ? "" : "s")"
}
