import Foundation
import Truce

/// `truce rerere`: the answers people gave, recorded and replayed, as git's `rerere` shows and forgets them.
struct RerereCommand: Command {
    static let name = "rerere"
    static let synopsis = "truce rerere [status|diff|forget DOC|ID|gc]"
    static let summary = "the recorded answers: which apply to the conflicts now, what they write, forget them, collect old ones"
    static let options: [Option] = [.device, .json]

    static func run(_ invocation: Invocation) async throws -> ExitCode {
        let arguments = invocation.arguments
        let verb = arguments.positionals.first ?? "status"
        let store = try invocation.openStore()
        switch verb {
        case "status", "diff":
            try invocation.rejectExtraPositionals(beyond: 1)
            var reports: [RecordReport] = []
            var lines: [String] = []
            for versions in try store.documentsInConflict() {
                let records = try await store.recordedAnswers(for: versions.key)
                guard !records.isEmpty else { continue }
                for record in records {
                    reports.append(RecordReport(record, for: versions.key))
                    lines.append("\(versions.key): \(RecordReport.line(record))")
                    if verb == "diff" {
                        lines += ["--- preimage"] + text(record.preimage) + ["+++ postimage"] + text(record.postimage)
                    }
                }
            }
            if invocation.wantsJSON {
                try invocation.output.json(reports)
            } else if lines.isEmpty {
                invocation.output.out("no recorded answer applies to the documents in conflict")
            } else {
                invocation.output.out(lines.joined(separator: "\n"))
            }
        case "forget":
            try invocation.rejectExtraPositionals(beyond: 2)
            let what = try invocation.positional(1, "DOC or ID")
            let forgotten: [String]
            if let key = try? DocumentKey(what), try store.state(of: key) != .absent {
                forgotten = try await store.forgetRecordedAnswers(for: key, device: invocation.device())
            } else {
                try store.forgetRecordedAnswer(what, device: invocation.device())
                forgotten = [what]
            }
            if invocation.wantsJSON {
                try invocation.output.json(["forgotten": forgotten])
            } else {
                invocation.output.out(
                    forgotten.isEmpty ? "no recorded answer applies to \(what)" : forgotten.map { "forgot \($0)" }.joined(separator: "\n"))
            }
        case "gc":
            try invocation.rejectExtraPositionals(beyond: 1)
            let collected = try store.collectRecordedAnswers(device: invocation.device())
            if invocation.wantsJSON {
                try invocation.output.json(["collected": collected])
            } else {
                invocation.output.out("collected \(collected.count) recorded answer\(collected.count == 1 ? "" : "s")")
            }
        default:
            throw UsageError("unknown rerere command '\(verb)'; use status, diff, forget or gc")
        }
        return .success
    }

    /// Text as lines for a diff-like listing, control characters escaped by the output.
    static func text(_ data: Data?) -> [String] {
        guard let data else { return ["(the document deleted)"] }
        return String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }
}

/// A recorded answer as the command line reports it.
struct RecordReport: Encodable {
    let id: String
    let scope: String
    let path: String?
    let recordedBy: String
    let recordedAt: String
    let recordedIn: DocumentKey
    let appliesTo: DocumentKey?

    init(_ record: RecordedAnswer, for key: DocumentKey? = nil) {
        (id, scope, path, recordedBy) = (record.id, record.scope.rawValue, record.path, record.recordedBy)
        (recordedAt, recordedIn, appliesTo) = (ISO8601.format(record.recordedAt), record.document, key)
    }

    static func line(_ record: RecordedAnswer) -> String {
        "\(record.id.prefix(12)) \(record.scope.rawValue)\(record.path.map { " at \($0)" } ?? "") recorded by \(record.recordedBy) "
            + "on \(ISO8601.format(record.recordedAt)) in \(record.document)"
    }
}
