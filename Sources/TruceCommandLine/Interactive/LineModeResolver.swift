import Foundation
import Truce

/// `resolve -i` when standard input or output is not a terminal: each open point is printed as `truce conflicts`
/// prints it, then one answer is read per line, so a script can answer point by point.
///
/// A line is an answer as `--take` spells it (`ours`, `theirs`, `base`,
/// `both`, `both-reversed`, a version id, `file:PATH`), or `skip` (leave the
/// point for later), `undo`, `park` (keep the answers in the store and stop),
/// `quit` (stop, writing nothing). Once every point has an answer the
/// resolution is written. The end of the input stops as `quit` does.
struct LineModeResolver {
    let store: DocumentStore
    let output: Output
    let device: String
    let readLine: () -> String?

    func run(_ session: ResolutionSession) async throws -> InteractiveResolver.Outcome {
        var session = session
        let conflict = try store.contestedConflictSet(of: session.key)
        if let note = InteractiveResolver.note(for: session) { output.out(note) }
        var skipped: Set<String> = []
        while let point = session.points.first(where: { session.answers[$0.id] == nil && !skipped.contains($0.id) }) {
            output.out(ConflictsCommand.describe([point], of: conflict).dropFirst().joined(separator: "\n"))
            let place = point.path ?? point.id
            output.raw(Data("\(Output.escapingControls(place)) [ours|theirs|base|both|both-reversed|VERSION|file:PATH|skip|undo|park|quit]? ".utf8))
            guard let line = readLine()?.trimmingCharacters(in: .whitespaces) else {
                output.out("")
                return .quit(session)
            }
            switch line {
            case "skip": skipped.insert(point.id)
            case "undo": output.out(session.undo() ? "undone" : "nothing to undo")
            case "park":
                _ = try store.park(session, device: device)
                return .parked(session)
            case "quit": return .quit(session)
            default:
                do {
                    let (_, answer) = try ResolveCommand.parseTake("\(point.id)=\(line)")
                    try session.answer(point.id, with: answer)
                } catch let error as UsageError {
                    output.out(error.message)
                } catch {
                    output.out(InteractiveResolver.describe(error))
                }
            }
        }
        guard session.isComplete else { return .quit(session) }
        return .written(try await store.commit(session, device: device))
    }
}
