import Foundation
import Testing

@testable import TruceCommandLine

/// The point editor: the person's editor on a file, markers left in refused.
@Suite(.timeLimit(.minutes(10)))
struct PointEditorTests {
    @Test func anEditThatLeavesAMarkerIsRefusedAndTheEditorGetsThePathAsAnArgument() throws {
        let markers = ConflictMarkers()
        let text = markers.draw(sides: [("1 a", Data("x\n".utf8)), ("2 b", Data("y\n".utf8))], base: nil, end: "end")
        // An editor that changes nothing leaves the markers: refused.
        #expect(throws: InputError.self) { try PointEditor(environment: ["EDITOR": "true"]).edit(text, named: "a.H1.md", markers: markers) }
        // The path reaches the command as "$1", whatever it holds: the name is never read by the shell.
        let edited = try PointEditor(environment: ["EDITOR": "printf 'z\\n' >"]).edit(text, named: "a;$(false).H1.md", markers: markers)
        #expect(edited == Data("z\n".utf8))
        #expect(PointEditor(environment: ["VISUAL": "", "EDITOR": "nano"]).command == "nano")
    }
}
