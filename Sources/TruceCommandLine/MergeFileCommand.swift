import Foundation
import Truce

struct MergeFileCommand: Command {
    static let name = "merge-file"
    static let synopsis = "truce merge-file [--diff3|--zdiff3] [--ours|--theirs|--union] [--marker-size N] [-L L1 -L L2 -L L3] CURRENT BASE OTHER"
    static let summary = "merge plain files three-way and print what 'git merge-file -p' prints; exit status = number of conflicts"
    static let options: [Option] = [
        .flag("--diff3", help: "show the base's lines in conflicts too"),
        .flag("--zdiff3", help: "like --diff3, with lines both sides share moved out of conflicts"),
        .flag("--ours", help: "settle conflicts with CURRENT's side"),
        .flag("--theirs", help: "settle conflicts with OTHER's side"),
        .flag("--union", help: "settle conflicts with both sides, CURRENT's first"),
        .value("--marker-size", help: "conflict markers N characters long (default 7)"),
        .value("-L", help: "a label to show instead of a file name: for CURRENT, then BASE, then OTHER"),
        .flag("-p", "--stdout", help: "accepted as git takes it; the result is always printed, no file is changed"),
    ]

    static let pathPositionals: Set<Int> = [0, 1, 2]

    static func run(_ invocation: Invocation) async throws -> ExitCode {
        try invocation.rejectExtraPositionals(beyond: 3)
        let paths = try [invocation.positional(0, "CURRENT"), invocation.positional(1, "BASE"), invocation.positional(2, "OTHER")]
        let arguments = invocation.arguments
        let labels = arguments.all("-L")
        guard labels.count <= 3 else { throw UsageError("too many labels: -L is given at most three times") }
        // As in git, a missing label is the file name given on the command line.
        let names = paths.indices.map { $0 < labels.count ? labels[$0] : paths[$0] }

        var options = TextMergeOptions(oursLabel: names[0], baseLabel: names[1], theirsLabel: names[2])
        options.style = try choose(from: [("--diff3", .diff3), ("--zdiff3", .zdiff3)], in: arguments) ?? .merge
        options.favor = try choose(from: [("--ours", .ours), ("--theirs", .theirs), ("--union", .union)], in: arguments) ?? .normal
        if let text = arguments.value("--marker-size") {
            guard let size = Int(text) else { throw UsageError("--marker-size needs a whole number, not '\(text)'") }
            guard size <= TextMerge.maximumMarkerSize else {
                throw UsageError("--marker-size can be at most \(TextMerge.maximumMarkerSize)")
            }
            options.markerSize = size
        }

        // Unlike `save`, '-' is a file name here, as in `git merge-file`.
        let handles = try (0..<3).map { try openFile(bytes: invocation.arguments.path(at: $0)!) }
        for (path, handle) in zip(paths, handles) where try TextMerge.isBinary(file: handle) {
            throw InputError("cannot merge '\(path)': it is a binary file")
        }
        // Region by region for large files: the merged bytes go out as they are made, never all held at once.
        let output = invocation.output
        guard
            let conflicts = try TextMerge.mergeFiles(base: handles[1], ours: handles[0], theirs: handles[2], options: options, write: output.raw)
        else {
            throw InputError("cannot merge binary files")
        }
        // git's exit status is the number of conflicts, capped at 127.
        return ExitCode(rawValue: Int32(min(conflicts, 127)))
    }

    /// The one option of `choices` given, nil when none; two of them is a usage error.
    private static func choose<T>(from choices: [(flag: String, value: T)], in arguments: Arguments) throws -> T? {
        let given = choices.filter { arguments.has($0.flag) }
        if given.count > 1 { throw UsageError("\(given.map(\.flag).joined(separator: " and ")) cannot be combined") }
        return given.first?.value
    }
}
