import Foundation
import Testing
import TruceCore

@testable import TruceCommandLine

/// Dates given on the command line: strict ISO 8601, and the library prints them back in UTC.
@Suite(.timeLimit(.minutes(10))) struct DateArgumentTests {
    @Test(arguments: [
        ("2026-11-30T20:15:00Z", 1_796_069_700.0),
        ("2026-11-30T21:15:00+01:00", 1_796_069_700.0),
        ("2026-11-30T19:15:00-0100", 1_796_069_700.0),
        ("2026-11-30T20:15:00.5Z", 1_796_069_700.5),
        ("2026-11-30 20:15:00Z", 1_796_069_700.0),
    ])
    func parses(text: String, seconds: Double) throws {
        #expect(try #require(DateArgument.parse(text)).timeIntervalSince1970 == seconds)
    }

    @Test(arguments: [
        "", "yesterday", "2026-11-30", "2026-11-30T20:15:00", "2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z",
        "2026-11-30T25:00:00Z", "2026-11-30T20:15:00Zjunk", "2026-11-30T20:15Z",
    ])
    func rejects(text: String) {
        #expect(DateArgument.parse(text) == nil)
    }

    @Test func formatsInUTC() {
        #expect(ISO8601.format(Date(timeIntervalSince1970: 1_796_069_700)) == "2026-11-30T20:15:00Z")
    }
}
