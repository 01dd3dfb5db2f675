import Foundation
import Truce

/// `truce fields`: the merge rules of a document's JSON fields, and a check of a rules document before it is saved.
struct FieldsCommand: Command {
    static let name = "fields"
    static let synopsis = "truce fields DOC | truce fields --check FILE|-"
    static let summary = "show the merge rules of DOC's JSON fields, or check a rules document line by line"
    static let options: [Option] = [.json, .flag("--check", help: "check FILE (or - for standard input) as a rules document")]

    static func run(_ invocation: Invocation) async throws -> ExitCode {
        try invocation.rejectExtraPositionals(beyond: 1)
        if invocation.arguments.has("--check") {
            let path = try invocation.positional(0, "FILE")
            let data = path == "-" ? FileHandle.standardInput.readDataToEndOfFile() : try readFile(path)
            let problems = FieldRules.check(data, name: path == "-" ? "standard input" : path)
            if invocation.wantsJSON {
                try invocation.output.json(["problems": problems])
            } else if problems.isEmpty {
                let count = (try? FieldRules(parsing: data, name: path))?.rules.count ?? 0
                invocation.output.out("\(path == "-" ? "standard input" : path): \(count) rules, no problems")
            } else {
                invocation.output.out(problems.joined(separator: "\n"))
            }
            return problems.isEmpty ? .success : .badInput
        }
        let rules = try invocation.openStore().resolverChoice(for: invocation.key()).fieldRules
        if invocation.wantsJSON {
            try invocation.output.json(
                rules.map { ["documents": $0.documents, "field": $0.field, "rule": $0.merge.name, "source": $0.source ?? ""] })
        } else {
            // In the order read: where two name one field, the later decides.
            invocation.output.out(
                rules.map { "\($0.field) \($0.merge.name) (\($0.source ?? "declared in Swift"): \($0.line))" }.joined(separator: "\n"))
        }
        return .success
    }
}
