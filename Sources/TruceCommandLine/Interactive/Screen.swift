import Foundation
import Truce

/// What the terminal resolver shows at one moment, as plain values: `Screen` draws it into lines without a terminal.
struct ResolverView: Sendable {
    enum Mode: Sendable, Equatable {
        /// One conflict point: the base, every head, and the answer given.
        case point
        /// The whole document as the answers make it, open points between markers.
        case preview
        /// The keys.
        case help
    }

    /// Text to show in a pane, with its title: a side of a point, the base, or the answer.
    struct Pane: Sendable, Equatable {
        let title: String
        /// nil: the side has no text here (`absent`).
        let text: Data?
        /// What to show for no text: `(deleted)`, `(absent)`, `(no base)`.
        var absent = "(deleted)"
        /// True for the pane whose text the answer takes.
        var chosen = false
    }

    var document: String
    /// `document 2 of 3` when resolving several, else nil.
    var progress: String? = nil
    /// `H1 (1 of 2) lines 3-5` or `/theme (1 of 1)`.
    var pointTitle: String
    var remaining: Int
    var total: Int
    /// The answer at this point for people (`ours: tablet …`), nil when it has none.
    var answer: String?
    /// A line about the session (`continued: parked by laptop …`), shown until the first key.
    var note: String? = nil
    var base: Pane
    var heads: [Pane]
    /// What the answer puts at the point, when it is not just one head's text (both, an edit).
    var answerPane: Pane? = nil
    /// The last thing that happened, or what went wrong.
    var message: String? = nil
    /// A question waiting for a key (`take every open point from head 1-3?`).
    var prompt: String? = nil
    var mode: Mode = .point
    /// The document with the answers so far, for `.preview`; nil text is a deletion.
    var preview: Pane? = nil
    /// Lines scrolled past in the scrolling part of the screen.
    var scroll = 0
    var colour: Bool
}

/// Draws a `ResolverView` into lines for a terminal of a given size: pure, so it is tested without one.
///
/// Every line is at most `width` columns. Text from other replicas has its
/// control characters escaped (`\x1B`), tabs expanded, and long lines cut
/// with `…`. SGR attributes are used only when `colour` is on.
enum Screen {
    /// The smallest terminal the resolver draws on; smaller ones get one line saying so.
    static let minimumWidth = 40
    static let minimumHeight = 12
    /// From this width, two heads are shown side by side.
    static let sideBySideWidth = 100

    /// The lines of one frame and the scroll it was drawn at (clamped to what there is to scroll).
    struct Frame: Equatable {
        let lines: [String]
        let scroll: Int
    }

    static func render(_ view: ResolverView, width: Int, height: Int) -> Frame {
        guard width >= minimumWidth, height >= minimumHeight else {
            let text = "terminal too small (\(width)×\(height)); needs \(minimumWidth)×\(minimumHeight)"
            return Frame(lines: [clip(text, to: max(width, 1))] + Array(repeating: "", count: max(height - 1, 0)), scroll: 0)
        }
        let style = Style(on: view.colour)
        var header = "truce resolve  \(Output.escapingControls(view.document))"
        if let progress = view.progress { header += "  (\(progress))" }
        let count = view.remaining == 0 ? "all \(view.total) answered" : "\(view.remaining) of \(view.total) open"
        let top = style.inverse(fit(header, count, width: width))
        let footer = style.dim(clip(footerKeys(view.mode), to: width))
        var message = view.prompt ?? view.message ?? ""
        if message.isEmpty, view.remaining == 0, view.mode == .point {
            message = "All points answered: w writes the resolution, p previews it, u takes the last answer back."
        }
        let messageLine = view.prompt != nil ? style.bold(clip(message, to: width)) : clip(message, to: width)
        let bodyHeight = height - 3
        var fixed: [String]
        var scrolling: [String]
        switch view.mode {
        case .help:
            fixed = [style.bold(clip("Keys", to: width))]
            scrolling = helpLines.map { clip($0, to: width) }
        case .preview:
            let pane = view.preview ?? ResolverView.Pane(title: "preview", text: nil)
            fixed = [rule(pane.title, width: width, style: style)]
            scrolling = textLines(pane.text, absent: pane.absent).map { clip($0, to: width) }
        case .point:
            (fixed, scrolling) = pointLines(view, width: width, bodyHeight: bodyHeight, style: style)
        }
        let room = max(bodyHeight - fixed.count, 1)
        let limit = max(scrolling.count - room, 0)
        let scroll = min(max(view.scroll, 0), limit)
        var shown = Array(scrolling.dropFirst(scroll).prefix(room))
        if scroll < limit, let last = shown.indices.last {
            shown[last] = style.dim(clip("  … \(limit - scroll) more lines: ↓ PgDn space", to: width))
        }
        var body = fixed + shown
        body += Array(repeating: "", count: max(bodyHeight - body.count, 0))
        return Frame(lines: [top] + body.prefix(bodyHeight) + [messageLine, footer], scroll: scroll)
    }

    /// The point view: the header lines and the base (always visible), then the heads and the answer, which scroll.
    private static func pointLines(_ view: ResolverView, width: Int, bodyHeight: Int, style: Style) -> (fixed: [String], scrolling: [String]) {
        var fixed = [style.bold(clip(view.pointTitle, to: width))]
        fixed.append(clip(view.answer.map { "answer: " + Output.escapingControls($0) } ?? "no answer yet", to: width))
        if let note = view.note { fixed.append(style.dim(clip(Output.escapingControls(note), to: width))) }
        // The base keeps a third of the body at most, so that it stays on screen whatever the heads hold.
        let baseText = textLines(view.base.text, absent: view.base.absent)
        let baseRoom = max(1, bodyHeight / 3 - 1)
        fixed.append(rule(view.base.title, width: width, style: style))
        if baseText.count > baseRoom {
            fixed += baseText.prefix(baseRoom - 1).map { clip("  " + $0, to: width) }
            fixed.append(style.dim(clip("  … \(baseText.count - baseRoom + 1) more base lines (p: preview)", to: width)))
        } else {
            fixed += baseText.map { clip("  " + $0, to: width) }
        }
        var scrolling: [String] = []
        if view.heads.count == 2, width >= sideBySideWidth {
            let column = (width - 3) / 2
            let left = view.heads[0], right = view.heads[1]
            scrolling.append(
                rule(left.title, width: column, style: style, chosen: left.chosen) + style.dim(" │ ")
                    + rule(right.title, width: width - column - 3, style: style, chosen: right.chosen))
            let leftLines = textLines(left.text, absent: left.absent), rightLines = textLines(right.text, absent: right.absent)
            for row in 0..<max(leftLines.count, rightLines.count) {
                let leftText = row < leftLines.count ? "  " + leftLines[row] : ""
                let rightText = row < rightLines.count ? "  " + rightLines[row] : ""
                scrolling.append(pad(clip(leftText, to: column), to: column) + style.dim(" │ ") + clip(rightText, to: width - column - 3))
            }
        } else {
            for pane in view.heads {
                scrolling.append(rule(pane.title, width: width, style: style, chosen: pane.chosen))
                scrolling += textLines(pane.text, absent: pane.absent).map { clip("  " + $0, to: width) }
            }
        }
        if let pane = view.answerPane {
            scrolling.append(rule(pane.title, width: width, style: style, chosen: true))
            scrolling += textLines(pane.text, absent: pane.absent).map { clip("  " + $0, to: width) }
        }
        return (fixed, scrolling)
    }

    /// The keys, one per line, for the help screen.
    static let helpLines = [
        "n  tab       the next point without an answer",
        "]  →  [  ←   the next point, the previous point",
        "↓ ↑ PgDn PgUp space   scroll",
        "o            answer ours: the current version's text",
        "t            answer theirs: the other head's text (two heads only)",
        "b            answer base: the base's text",
        "m            answer both: every head's text, the current version's first",
        "M            answer both, the current version's last",
        "1-9          answer with head N's text (heads are numbered as shown)",
        "A then 1-9   take head N's text at every point still open",
        "e            edit the point in $VISUAL or $EDITOR (conflict markers left in are refused)",
        "c            take the answer back (no answer)",
        "u  r         undo, redo",
        "p            preview the whole document, open points between conflict markers",
        "w            write the resolution (every point answered)",
        "P            park: keep the answers in the store, synced, to go on later here or elsewhere",
        "s            skip this document (resolving several)",
        "q            quit without writing (asks when answers would be lost)",
        "?            this help; any key goes back",
    ]

    static func footerKeys(_ mode: ResolverView.Mode) -> String {
        switch mode {
        case .point: "?:help n:next o/t/b/m/1-9:answer A:all e:edit u/r:undo/redo p:preview w:write P:park q:quit"
        case .preview: "p/esc:back ↓↑ PgDn/PgUp:scroll w:write q:quit"
        case .help: "any key: back"
        }
    }

    /// `text` as lines for the screen: control characters escaped, tabs expanded; binary and absent text described.
    static func textLines(_ text: Data?, absent: String) -> [String] {
        guard let text else { return [absent] }
        if text.isEmpty { return ["(empty)"] }
        if TextMerge.isBinary(text) { return ["(binary, \(text.count) bytes)"] }
        var lines = text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
            expandTabs(Output.escapingControls(String(decoding: line, as: UTF8.self)))
        }
        if text.last == UInt8(ascii: "\n") { lines.removeLast() } else { lines.append("(no newline at end)") }
        return lines
    }

    static func expandTabs(_ line: String) -> String {
        guard line.contains("\t") else { return line }
        var result = ""
        var column = 0
        for character in line {
            if character == "\t" {
                let spaces = 4 - column % 4
                result += String(repeating: " ", count: spaces)
                column += spaces
            } else {
                result.append(character)
                column += width(of: character)
            }
        }
        return result
    }

    /// `── title ─────` across `width` columns; bold, and green when `chosen`.
    static func rule(_ title: String, width: Int, style: Style, chosen: Bool = false) -> String {
        let mark = chosen ? "✓ " : ""
        let text = clip("── \(mark)\(Output.escapingControls(title)) ", to: width)
        let line = text + String(repeating: "─", count: max(width - displayWidth(text), 0))
        return chosen ? style.chosen(line) : style.bold(line)
    }

    /// `left` and `right` on one line of `width` columns, `left` cut first.
    static func fit(_ left: String, _ right: String, width: Int) -> String {
        let room = width - displayWidth(right) - 1
        guard room > 4 else { return clip(right, to: width) }
        let start = clip(left, to: room)
        return start + String(repeating: " ", count: width - displayWidth(start) - displayWidth(right)) + right
    }

    /// `text` cut to `width` columns, with `…` where it was cut.
    static func clip(_ text: String, to width: Int) -> String {
        guard displayWidth(text) > width else { return text }
        var result = ""
        var used = 0
        for character in text {
            let next = Self.width(of: character)
            if used + next > width - 1 { break }
            result.append(character)
            used += next
        }
        return result + "…"
    }

    static func pad(_ text: String, to width: Int) -> String {
        text + String(repeating: " ", count: max(width - displayWidth(text), 0))
    }

    /// The columns `text` takes on a terminal.
    static func displayWidth(_ text: String) -> Int { text.reduce(0) { $0 + width(of: $1) } }

    /// The columns one character takes: 0 for a combining mark alone, 2 for East Asian wide and emoji, else 1.
    static func width(of character: Character) -> Int {
        guard let scalar = character.unicodeScalars.first else { return 0 }
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: break
        }
        let value = scalar.value
        let wide =
            (0x1100...0x115F).contains(value) || (0x2E80...0xA4CF).contains(value) || (0xAC00...0xD7A3).contains(value)
            || (0xF900...0xFAFF).contains(value) || (0xFE30...0xFE4F).contains(value) || (0xFF00...0xFF60).contains(value)
            || (0xFFE0...0xFFE6).contains(value) || (0x1F300...0x1FAFF).contains(value) || (0x20000...0x3FFFD).contains(value)
        return wide ? 2 : 1
    }

    /// SGR attributes, or nothing at all when colour is off (`NO_COLOR`, `TERM=dumb`).
    struct Style {
        let on: Bool
        func inverse(_ text: String) -> String { on ? "\u{1B}[7m\(text)\u{1B}[0m" : text }
        func bold(_ text: String) -> String { on ? "\u{1B}[1m\(text)\u{1B}[0m" : text }
        func dim(_ text: String) -> String { on ? "\u{1B}[2m\(text)\u{1B}[0m" : text }
        func chosen(_ text: String) -> String { on ? "\u{1B}[1;32m\(text)\u{1B}[0m" : text }
    }
}
