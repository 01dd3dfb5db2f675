import Foundation
import Testing

@testable import TruceCommandLine

/// The terminal resolver's frames, drawn without a terminal.
@Suite(.timeLimit(.minutes(10)))
struct ScreenTests {
    static func view(heads: Int = 3, lines: Int = 1, colour: Bool = false, remaining: Int = 2) -> ResolverView {
        ResolverView(
            document: "notes/todo.md", pointTitle: "H1  (1 of 2)  base line 1", remaining: remaining, total: 2, answer: nil,
            base: .init(title: "base 2026-11-30T09:00:00Z 3cad51f", text: Data("one\n".utf8)),
            heads: (1...heads).map { number in
                .init(
                    title: "\(number) device\(number) 2026-11-30T10:00:00Z abcdef\(number)",
                    text: Data((1...lines).map { "head \(number) line \($0)\n" }.joined().utf8))
            }, colour: colour)
    }

    @Test(arguments: [(80, 24), (100, 30), (40, 12), (200, 60)])
    func everyLineFitsAndTheFrameFillsTheScreen(width: Int, height: Int) {
        for view in [Self.view(), Self.view(heads: 2), Self.view(lines: 200)] {
            let frame = Screen.render(view, width: width, height: height)
            #expect(frame.lines.count == height)
            #expect(frame.lines.allSatisfy { Screen.displayWidth($0) <= width }, "\(frame.lines)")
            #expect(frame.lines[0].hasPrefix("truce resolve  notes/todo.md") && frame.lines[0].hasSuffix("2 of 2 open"))
        }
    }

    @Test func theBaseStaysOnScreenWhenTheHeadsScroll() {
        var view = Self.view(lines: 200)
        view.scroll = 150
        let frame = Screen.render(view, width: 80, height: 24)
        #expect(frame.lines.contains { $0.hasPrefix("── base ") } && frame.lines.contains("  one"))
        #expect(frame.lines[5] == "  head 1 line 150", "\(frame.lines)")
        view.scroll = 10_000
        #expect(Screen.render(view, width: 80, height: 24).scroll < 10_000, "the scroll is clamped to what there is")
    }

    @Test func twoHeadsAreSideBySideOnAWideTerminalAndStackedOtherwise() {
        #expect(Screen.render(Self.view(heads: 2), width: 100, height: 30).lines.contains { $0.contains(" │ ") })
        #expect(!Screen.render(Self.view(heads: 2), width: 99, height: 30).lines.contains { $0.contains(" │ ") })
        #expect(!Screen.render(Self.view(heads: 3), width: 200, height: 30).lines.contains { $0.contains(" │ ") })
    }

    @Test func controlCharactersFromOtherReplicasAreEscapedAndTabsExpanded() {
        var view = Self.view(heads: 2)
        view.heads[0] = .init(title: "1 evil\u{1B}]0;title\u{07}", text: Data("5\u{1B}[2J\tx\u{9B}31m\n".utf8))
        let lines = Screen.render(view, width: 100, height: 30).lines
        #expect(!lines.joined().unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
        #expect(lines.contains { $0.contains("5\\x1B[2J    x\\u{9B}31m") } && lines.contains { $0.contains("1 evil\\x1B]0;title\\x07") }, "\(lines)")
    }

    @Test func colourOnlyWhenAsked() {
        #expect(!Screen.render(Self.view(), width: 80, height: 24).lines.joined().contains("\u{1B}"))
        #expect(Screen.render(Self.view(colour: true), width: 80, height: 24).lines[0].hasPrefix("\u{1B}[7m"))
        #expect(!Terminal.wantsColour(["TERM": "xterm", "NO_COLOR": "1"]) && !Terminal.wantsColour(["TERM": "dumb"]))
        #expect(Terminal.wantsColour(["TERM": "xterm", "NO_COLOR": ""]))
    }

    @Test func allAnsweredIsSaidAndATinyTerminalGetsOneLine() {
        let done = Screen.render(Self.view(remaining: 0), width: 80, height: 24).lines
        #expect(done[0].hasSuffix("all 2 answered") && done[22].hasPrefix("All points answered: w writes the resolution"))
        let tiny = Screen.render(Self.view(), width: 20, height: 5).lines
        #expect(tiny.count == 5 && tiny[0] == "terminal too small …" && tiny.dropFirst().allSatisfy(\.isEmpty), "\(tiny)")
    }
}
