import Foundation
import Truce

/// The full-screen terminal resolver: a loop that reads a key, changes the `ResolutionSession`, and draws the
/// `Screen` again. Everything it does to the answers is the session's; writing and parking are the store's.
struct InteractiveResolver {
    let store: DocumentStore
    let terminal: Terminal
    let device: String
    let editor: PointEditor
    /// `document 2 of 3` when resolving several documents.
    var progress: String?

    /// How one document's session ended.
    enum Outcome {
        case written(ResolveResult)
        case parked(ResolutionSession)
        case skipped(ResolutionSession)
        case quit(ResolutionSession)
    }

    /// What the loop keeps between keys besides the session.
    private struct State {
        var session: ResolutionSession
        var index = 0
        var mode = ResolverView.Mode.point
        var scroll = 0
        var message: String?
        var note: String?
        var prompt: Prompt?
        var preview: ResolverView.Pane?
        let initialAnswers: [String: HunkAnswer]

        enum Prompt { case takeAll, confirmQuit }

        var point: ConflictPoint { session.points[index] }
    }

    func run(_ session: ResolutionSession) async throws -> Outcome {
        // No point to show (the session is complete as it is): write it, as `w` would.
        guard !session.points.isEmpty else { return .written(try await store.commit(session, device: device)) }
        var state = State(session: session, initialAnswers: session.answers)
        state.index = session.nextUnanswered.flatMap { next in session.points.firstIndex { $0.id == next.id } } ?? 0
        state.note = Self.note(for: session)
        let keys = KeyReader(terminal: terminal)
        while true {
            draw(state)
            let key = keys.next()
            if key == .redraw { continue }
            if key == .endOfInput { return .quit(state.session) }
            state.note = nil
            if let outcome = try await handle(key, &state) { return outcome }
        }
    }

    // MARK: Keys

    private func handle(_ key: Key, _ state: inout State) async throws -> Outcome? {
        if let prompt = state.prompt {
            state.prompt = nil
            return answerPrompt(prompt, key, &state)
        }
        if key == .control("c") { return .quit(state.session) }
        switch state.mode {
        case .help:
            state.mode = .point
            state.scroll = 0
            return nil
        case .preview:
            switch key {
            case .character("p"), .escape:
                state.mode = .point
                state.scroll = 0
                return nil
            case .character("w"), .character("q"), .character("P"):
                // Write, quit and park work from the preview as from the point.
                state.mode = .point
                state.scroll = 0
            default:
                scroll(key, &state)
                return nil
            }
        case .point: break
        }
        state.message = nil
        let session = state.session
        switch key {
        case .character("?"):
            state.mode = .help
            state.scroll = 0
        case .character("n"), .tab:
            if let next = session.nextUnanswered(after: state.point.id) {
                move(to: session.points.firstIndex { $0.id == next.id } ?? state.index, &state)
            } else {
                state.message = "every point has an answer"
            }
        case .character("]"), .right: move(to: min(state.index + 1, session.points.count - 1), &state)
        case .character("["), .left: move(to: max(state.index - 1, 0), &state)
        case .character("o"): give(.ours, &state)
        case .character("t"): give(.theirs, &state)
        case .character("b"): give(.base, &state)
        case .character("m"): give(.both, &state)
        case .character("M"): give(.bothReversed, &state)
        case .character(let digit) where digit.isWholeNumber && digit != "0":
            guard let head = head(numbered: digit, of: session) else {
                state.message = "there is no head \(digit); the heads are 1-\(session.heads.count)"
                break
            }
            give(.version(head.id.hex), &state)
        case .character("A"):
            state.prompt = .takeAll
        case .character("c"):
            state.session.clearAnswer(state.point.id)
            state.message = "\(state.point.id): no answer"
        case .character("u"):
            state.message = state.session.undo() ? "undone" : "nothing to undo"
            show(changesFrom: session, &state)
        case .character("r"), .control("r"):
            state.message = state.session.redo() ? "redone" : "nothing to redo"
            show(changesFrom: session, &state)
        case .character("e"): edit(&state)
        case .character("p"):
            do {
                let open = session.remaining
                let text = try await session.preview()
                state.preview = ResolverView.Pane(
                    title: "preview of \(session.key)" + (open == 0 ? ": as it will be written" : ": \(open) open, between conflict markers"),
                    text: text, absent: "(the answers delete the document)")
                state.mode = .preview
                state.scroll = 0
            } catch {
                state.message = "cannot preview: \(Self.describe(error))"
            }
        case .character("w"):
            guard session.isComplete else {
                state.message = "\(session.remaining) point\(session.remaining == 1 ? "" : "s") still open: n goes to the next one"
                break
            }
            do {
                return .written(try await store.commit(session, device: device))
            } catch {
                state.message = "nothing was written: \(Self.describe(error))"
            }
        case .character("P"):
            do {
                _ = try store.park(session, device: device)
                return .parked(session)
            } catch {
                state.message = "cannot park: \(Self.describe(error))"
            }
        case .character("s") where progress != nil:
            return .skipped(session)
        case .character("q"):
            if session.answers == state.initialAnswers { return .quit(session) }
            state.prompt = .confirmQuit
        default:
            scroll(key, &state)
        }
        return nil
    }

    private func answerPrompt(_ prompt: State.Prompt, _ key: Key, _ state: inout State) -> Outcome? {
        switch prompt {
        case .confirmQuit:
            if key == .character("y") || key == .character("q") { return .quit(state.session) }
            state.message = "not quitting"
        case .takeAll:
            guard case .character(let digit) = key, let head = head(numbered: digit, of: state.session) else {
                state.message = "took nothing"
                return nil
            }
            do {
                let open = state.session.remaining
                try state.session.take(head.id)
                state.message = "took head \(digit) at \(open) open point\(open == 1 ? "" : "s")"
            } catch {
                state.message = Self.describe(error)
            }
        }
        return nil
    }

    private func give(_ answer: HunkAnswer, _ state: inout State) {
        let point = state.point
        do {
            try state.session.answer(point.id, with: answer)
        } catch {
            state.message = Self.describe(error)
            return
        }
        state.message = "\(point.path ?? point.id): \(describe(answer, in: state.session))"
        if let next = state.session.nextUnanswered(after: point.id) {
            move(to: state.session.points.firstIndex { $0.id == next.id } ?? state.index, &state)
        }
    }

    private func edit(_ state: inout State) {
        let session = state.session
        let point = state.point
        let heads = point.sides.map { side in (label: label(of: side, in: session), text: side.text) }
        let markers = ConflictMarkers(avoiding: point.sides.map(\.text) + [point.base])
        let text: Data
        if let answer = session.answers[point.id], let given = try? session.text(of: answer, at: point.id) {
            text = given
        } else {
            text = markers.draw(sides: heads, base: (session.baseLabel, point.base), end: "end of \(point.path ?? point.id)")
        }
        let name = (session.key.rawValue.split(separator: "/").last.map(String.init) ?? "document")
        let parts = name.split(separator: ".", maxSplits: 1)
        let fileName = parts.count == 2 ? "\(parts[0]).\(point.id).\(parts[1])" : "\(name).\(point.id)"
        do {
            let edited = try terminal.suspended { try editor.edit(text, named: fileName, markers: markers) }
            try state.session.answer(point.id, with: .text(edited))
            state.message = "\(point.path ?? point.id): your own text"
        } catch {
            state.message = Self.describe(error)
        }
    }

    /// After an undo or a redo, shows the first point whose answer it changed.
    private func show(changesFrom before: ResolutionSession, _ state: inout State) {
        let after = state.session
        if let index = after.points.firstIndex(where: { before.answers[$0.id] != after.answers[$0.id] }) { move(to: index, &state) }
    }

    private func move(to index: Int, _ state: inout State) {
        state.index = index
        state.scroll = 0
    }

    private func scroll(_ key: Key, _ state: inout State) {
        let page = max(terminal.size.height - 8, 1)
        switch key {
        case .down, .character("j"): state.scroll += 1
        case .up, .character("k"): state.scroll = max(state.scroll - 1, 0)
        case .pageDown, .character(" "): state.scroll += page
        case .pageUp: state.scroll = max(state.scroll - page, 0)
        case .home: state.scroll = 0
        case .end: state.scroll = Int.max / 2
        default: state.message = "unknown key; ? shows the keys"
        }
    }

    // MARK: Drawing

    private func draw(_ state: State) {
        let size = terminal.size
        let frame = Screen.render(view(of: state), width: size.width, height: size.height)
        terminal.draw(frame.lines)
    }

    private func view(of state: State) -> ResolverView {
        let session = state.session
        let point = state.point
        let answer = session.answers[point.id]
        var title = "\(point.path.map { $0.isEmpty ? "\"\" (the whole document)" : $0 } ?? point.id)  (\(state.index + 1) of \(session.points.count))"
        if point.path == nil { title += "  " + (point.baseLines.map { "base \($0)" } ?? "whole document") }
        if let reason = point.reason { title += ": " + reason }
        var baseText = point.base
        if point.isWholeDocument, let base = session.base { baseText = try? store.contents(of: base) }
        let absent = point.path != nil ? "(absent)" : "(deleted)"
        let heads = point.sides.map { side in
            ResolverView.Pane(title: label(of: side, in: session), text: side.text, absent: absent, chosen: chooses(answer, side, in: session))
        }
        var answerPane: ResolverView.Pane?
        switch answer {
        case .both, .bothReversed, .text:
            answerPane = ResolverView.Pane(title: "the answer puts here", text: try? session.text(of: answer!, at: point.id), absent: "(nothing)")
        default: break
        }
        var answerLine = answer.map { describe($0, in: session) }
        if let record = session.recalled[point.id], answer != nil {
            answerLine = (answerLine ?? "") + "  (recalled: \(record.recordedBy) answered this conflict before)"
        }
        var prompt: String?
        switch state.prompt {
        case .takeAll: prompt = "take head 1-\(session.heads.count) at every open point? (any other key cancels)"
        case .confirmQuit: prompt = "quit without writing? the answers given here are lost (P parks them). y quits, any other key stays"
        case nil: break
        }
        return ResolverView(
            document: session.key.rawValue, progress: progress, pointTitle: title, remaining: session.remaining, total: session.points.count,
            answer: answerLine, note: state.note,
            base: ResolverView.Pane(
                title: session.baseLabel, text: baseText, absent: session.base == nil ? "(no common base)" : absent, chosen: answer == .base),
            heads: heads, answerPane: answerPane, message: state.message, prompt: prompt, mode: state.mode, preview: state.preview,
            scroll: state.scroll, colour: terminal.colour)
    }

    /// `2 laptop 2026-11-30T10:00:00Z 923b511`: the head's number for the keys, then the session's label.
    private func label(of side: ConflictPoint.Side, in session: ResolutionSession) -> String {
        let number = (session.heads.firstIndex { $0.id == side.version } ?? 0) + 1
        return "\(number) \(session.label(of: side))"
    }

    private func head(numbered digit: Character, of session: ResolutionSession) -> Version? {
        guard let number = digit.wholeNumberValue, number >= 1, number <= session.heads.count else { return nil }
        return session.heads[number - 1]
    }

    private func chooses(_ answer: HunkAnswer?, _ side: ConflictPoint.Side, in session: ResolutionSession) -> Bool {
        switch answer {
        case .ours: side.isCurrent
        case .theirs: !side.isCurrent
        case .version(let prefix): side.version.hex.hasPrefix(prefix)
        default: false
        }
    }

    /// An answer for people: `ours`, `head 2 (laptop …)`, `your own text`.
    private func describe(_ answer: HunkAnswer, in session: ResolutionSession) -> String {
        switch answer {
        case .version(let prefix):
            if let number = session.heads.firstIndex(where: { $0.id.hex.hasPrefix(prefix) }) {
                return "head \(number + 1) (\(session.heads[number].deviceName) \(session.heads[number].id.short))"
            }
            return "the base"
        case .text: return "your own text"
        case .both: return "both, the current version's first"
        case .bothReversed: return "both, the current version's last"
        default: return answer.description
        }
    }

    /// What to say about a session that continues a parked one.
    static func note(for session: ResolutionSession) -> String? {
        var notes: [String] = []
        if let resumed = session.resumption {
            var text = "continued the session parked by \(resumed.parkedBy) at \(ISO8601.format(resumed.parkedAt)): \(resumed.kept) answer"
            text += resumed.kept == 1 ? " kept" : "s kept"
            if resumed.dropped > 0 { text += ", \(resumed.dropped) dropped" }
            if resumed.newVersionsArrived { text += "; new versions arrived since" }
            notes.append(text)
        }
        if !session.recalled.isEmpty { notes.append("\(session.recalled.count) answered from recorded answers") }
        return notes.isEmpty ? nil : notes.joined(separator: "; ")
    }

    static func describe(_ error: any Error) -> String {
        switch error {
        case let error as TruceError: error.errorDescription ?? "\(error)"
        case let error as InputError: error.message
        default: "\(error)"
        }
    }
}
