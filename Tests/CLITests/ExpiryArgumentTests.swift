import Foundation
import Testing

@testable import TruceCommandLine

/// `prune --expire` reads git's forms of a grace period.
@Suite(.timeLimit(.minutes(10))) struct ExpiryArgumentTests {
    @Test(arguments: [("now", 0.0), ("2.weeks", 1_209_600.0), ("3 days", 259_200.0), ("1.hour.ago", 3600.0), ("90.minutes", 5400.0)])
    func expiriesParseAsGitWritesThem(text: String, seconds: Double) {
        #expect(ExpiryArgument.parse(text) == seconds)
    }

    @Test(arguments: ["", "soon", "2.fortnights", "-1.days", "weeks", "1.2.3"])
    func badExpiriesDoNotParse(text: String) {
        #expect(ExpiryArgument.parse(text) == nil)
    }
}
