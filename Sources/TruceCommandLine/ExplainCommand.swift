import Foundation
import Truce

struct ExplainCommand: Command {
    static let name = "explain"
    static let synopsis = "truce explain DOC"
    static let summary = "say why the current version is current and what would settle a conflict"
    static let options: [Option] = [.json]

    static func run(_ invocation: Invocation) async throws -> ExitCode {
        try invocation.rejectExtraPositionals(beyond: 1)
        let key = try invocation.key()
        let store = try invocation.openStore()
        let explanation = try store.explain(key)
        // A config error is part of the explanation: print what is known, then the error.
        var configurationError: TruceError?
        var choice: ResolverChoice?
        do { choice = try store.resolverChoice(for: key) } catch { configurationError = error }
        // What the chain would do now, so a resolver that passes (bad input, say) says why. Not with an external
        // driver in the chain: explaining never runs a configured command.
        var outcome: (summary: String, passed: [String], points: [String])?
        // Recorded answers that apply: who gave them, and when (replayed before the chain when they answer all of it).
        let recorded = explanation.versions.state == .inConflict ? (try? await store.recordedAnswers(for: key)) ?? [] : []
        if let choice, explanation.versions.state == .inConflict, choice.chain.allSatisfy({ choice.resolvers[$0]?.definition == nil }) {
            switch try await store.resolve(key, device: invocation.device(), dryRun: true) {
            case .wouldResolve(_, let resolver): outcome = ("\(resolver) would resolve it", [], [])
            case .needsPerson(let points, let resolver, let reasons):
                // Each point with the rule that sent it to a person (a structured path: a move, a key held twice…).
                let why = points.compactMap { point in
                    point.reason.map { "\(point.id)\(point.path.map { " at \($0.isEmpty ? "(the whole document)" : $0)" } ?? ""): \($0)" }
                }
                outcome = ("\(resolver) needs a person for \(points.count) conflict points", reasons, why)
            case .resolved, .nothingToResolve: break
            }
        }

        if invocation.wantsJSON {
            try invocation.output.json(
                ExplainReport(explanation, choice: choice, outcome: outcome, recorded: recorded.map { RecordReport($0) }, error: configurationError))
        } else {
            var lines = VersionsCommand.lines(for: explanation.versions)
            lines.append("why current: \(explanation.currentReason)")
            lines.append("rule: the head with the latest author date is current; on a tie, the larger version id")
            lines += explanation.datedAhead.map { DatesAhead.headNote($0, now: Date()) }
            lines.append("merge attribute: \(explanation.mergeAttribute)")
            if let choice {
                lines.append("resolver: \(choice.chain[0]) (from \(choice.source))")
                lines.append("fallbacks: " + (choice.chain.count > 1 ? choice.chain.dropFirst().joined(separator: " -> ") : "none"))
                for name in choice.chain {
                    if let definition = choice.resolvers[name]?.definition { lines.append("definition: \(definition)") }
                    for (option, value) in choice.options[name]?.values.sorted(by: { $0.key < $1.key }) ?? [] {
                        lines.append("option: resolver.\(name).\(option) = \(value)")
                    }
                    let options = choice.options[name] ?? ResolverOptions(resolverName: name)
                    for setting in choice.resolvers[name]?.settings(for: options) ?? [] { lines.append("\(name): \(setting)") }
                }
                // Where two name one field, the later decides: the order is the order they are read in.
                for rule in choice.fieldRules {
                    lines.append("field rule: \(rule.field) \(rule.merge.name) (\(rule.source ?? "declared in Swift"))")
                }
                lines.append("delete conflicts: \(choice.deleteConflict.rawValue) (\(choice.deleteConflictSource))")
                for record in recorded {
                    lines.append(
                        "recorded answer: \(record.id.prefix(12)) (\(record.scope.rawValue)) by \(record.recordedBy) on "
                            + "\(ISO8601.format(record.recordedAt)), given in \(record.document)")
                }
                if let outcome {
                    lines += outcome.passed.map { "passed: \($0)" }
                    lines.append("outcome: \(outcome.summary)")
                    lines += outcome.points.map { "point: \($0)" }
                }
            } else {
                lines.append("resolver: none, the configuration is invalid")
            }
            invocation.output.out(lines.joined(separator: "\n"))
        }
        if let configurationError {
            invocation.output.error(configurationError.errorDescription ?? "\(configurationError)")
            return .badInput
        }
        return .success
    }
}

struct ExplainReport: Encodable {
    let versions: VersionsReport
    let currentReason: String
    /// The heads dated more than a day ahead of this device's clock.
    let datedAhead: [VersionID]
    let mergeAttribute: String
    let resolvers: [String]?
    let resolverSource: String?
    let options: [String: [String: String]]?
    /// What config defines for a resolver of the chain: an external driver's command and where it came from.
    let definitions: [String: String]?
    /// What each resolver of the chain does with its options, in words (the structured resolver's array rules).
    let settings: [String: [String]]?
    let deleteConflict: DeleteConflictPolicy?
    /// What the chain would do now with a document in conflict, and why resolvers passed.
    let outcome: String?
    let passed: [String]?
    /// Each conflict point with the rule that sent it to a person, where its resolver says.
    let points: [String]?
    /// The recorded answers that apply to the conflict.
    let recorded: [RecordReport]
    let error: String?

    init(
        _ explanation: Explanation, choice: ResolverChoice?, outcome: (summary: String, passed: [String], points: [String])?,
        recorded: [RecordReport],
        error: TruceError?
    ) {
        versions = VersionsReport(explanation.versions)
        currentReason = explanation.currentReason
        datedAhead = explanation.datedAhead.map(\.id)
        mergeAttribute = explanation.mergeAttribute
        resolvers = choice?.chain
        resolverSource = choice?.source
        options = choice?.options.mapValues(\.values)
        definitions = choice?.resolvers.compactMapValues(\.definition)
        settings = choice.map { choice in
            // By the name the chain uses: a name that `uses` another resolver has options of its own.
            Dictionary(
                uniqueKeysWithValues: choice.resolvers.compactMap { name, resolver in
                    let lines = resolver.settings(for: choice.options[name] ?? ResolverOptions(resolverName: name))
                    return lines.isEmpty ? nil : (name, lines)
                })
        }
        deleteConflict = choice?.deleteConflict
        self.outcome = outcome?.summary
        passed = outcome?.passed
        points = outcome?.points
        self.recorded = recorded
        self.error = error?.errorDescription
    }
}
