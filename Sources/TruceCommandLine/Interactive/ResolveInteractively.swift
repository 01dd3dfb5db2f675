import Foundation
import Truce

/// `truce resolve -i DOC` and `truce resolve -i --all`: a person resolves document after document, on the full-screen
/// resolver when standard input and output are a terminal, else point by point in line mode.
///
/// Exit codes: 0 every document was written; 1 one was parked, skipped or
/// quit (a person is still needed); 2 bad usage, a document not in conflict,
/// or a terminal smaller than the resolver can draw on.
enum ResolveInteractively {
    static func run(_ invocation: Invocation) async throws -> ExitCode {
        let arguments = invocation.arguments
        let conflicting =
            ["--take", "--content", "--resolver", "--tool"].filter { arguments.value($0) != nil }
            + ["--delete", "--dry-run", "--json"].filter { arguments.has($0) }
        if let first = conflicting.first { throw UsageError("-i resolves as a person on the terminal; it takes no \(first)") }
        let all = arguments.has("--all")
        try invocation.rejectExtraPositionals(beyond: all ? 0 : 1)
        let store = try invocation.openStore()
        let keys = all ? try store.documentsInConflict().map(\.key) : [try invocation.key()]
        if keys.isEmpty {
            invocation.output.out("no documents in conflict")
            return .success
        }
        let device = invocation.device()
        let terminal = Terminal()
        if let terminal {
            let size = terminal.size
            guard size.width >= Screen.minimumWidth, size.height >= Screen.minimumHeight else {
                throw InputError(
                    "the terminal is \(size.width)×\(size.height); resolve -i needs at least \(Screen.minimumWidth)×\(Screen.minimumHeight) (or answer with --take)"
                )
            }
        }
        var open = false
        var summaries: [String] = []
        defer { terminal?.restore() }
        for (number, key) in keys.enumerated() {
            // A document settled meanwhile (by a sync, another person) is passed over when resolving several.
            guard let session = try await session(of: key, in: store, passingSettled: all) else { continue }
            let outcome: InteractiveResolver.Outcome
            if let terminal {
                try terminal.enter()
                var resolver = InteractiveResolver(store: store, terminal: terminal, device: device, editor: PointEditor())
                if all { resolver.progress = "document \(number + 1) of \(keys.count)" }
                outcome = try await resolver.run(session)
                terminal.restore()
            } else {
                let resolver = LineModeResolver(store: store, output: invocation.output, device: device) { Swift.readLine(strippingNewline: true) }
                outcome = try await resolver.run(session)
            }
            let summary = describe(outcome, key, toolName: invocation.output.toolName)
            if terminal != nil { summaries.append(summary) } else { invocation.output.out(summary) }
            if case .written = outcome {} else { open = true }
            if case .quit = outcome { break }
        }
        terminal?.restore()
        for summary in summaries { invocation.output.out(summary) }
        return open ? .needsPerson : .success
    }

    /// The session for `key`; nil for a document no longer in conflict when `passingSettled`.
    private static func session(of key: DocumentKey, in store: DocumentStore, passingSettled: Bool) async throws -> ResolutionSession? {
        do {
            return try await store.resolutionSession(for: key)
        } catch {
            if passingSettled, case .notInConflict = error { return nil }
            throw error
        }
    }

    /// The line printed once the terminal is back: what became of the document.
    static func describe(_ outcome: InteractiveResolver.Outcome, _ key: DocumentKey, toolName: String) -> String {
        switch outcome {
        case .written(let result):
            if case .resolved(let version, let resolver, _) = result { return "resolved \(key) with \(resolver): \(version.id.hex)" }
            return "\(key): nothing to resolve"
        case .parked(let session):
            return "parked \(key) with \(session.points.count - session.remaining) of \(session.points.count) points answered; "
                + "'\(toolName) resolve -i \(key)' goes on, here or on a replica after sync"
        case .skipped(let session), .quit(let session):
            return "\(key): nothing written; \(session.remaining) of \(session.points.count) points open"
        }
    }
}
