import Foundation
import Testing

@testable import TruceCommandLine

/// The markers a person or a tool gets, and the check that none is left.
@Suite(.timeLimit(.minutes(10)))
struct ConflictMarkersTests {
    @Test func markersAreLongerThanAnyMarkerLikeLineAndLeftoversAreFound() {
        let text = Data("a\n<<<<<<< not a marker\n=======\n".utf8)
        let markers = ConflictMarkers(avoiding: [text, nil])
        #expect(markers.size == 8 && markers.firstMarker(in: text) == nil)
        #expect(ConflictMarkers().firstMarker(in: text) == 2)
        let drawn = markers.draw(sides: [("1 a", Data("x".utf8)), ("2 b", nil)], base: ("base", Data("y\n".utf8)), end: "end")
        #expect(String(decoding: drawn, as: UTF8.self) == "<<<<<<<< 1 a\nx\n|||||||| base\ny\n======== 2 b\n>>>>>>>> end\n")
        #expect(markers.firstMarker(in: drawn) == 1)
    }
}
