import TestSupport
import Testing

@testable import TruceCore

/// A document's head names once a batch lands count as a set of them does, through any inserts and removals.
@Suite struct HeadNamesAfterTests {
    @Test func countsAsASetOfTheNamesDoes() {
        var random = SeededRandom(seed: 48)
        let pool = ["refs/truce/heads/a/1", "refs/truce/heads/a/2", "refs/truce/heads/a/3"]
        for _ in 0..<500 {
            let start = (0..<random.int(0...3)).map { _ in random.pick(pool) }
            var names = HeadNamesAfter(start), set = Set(start)
            #expect(names.count == set.count, "\(start)")
            for _ in 0..<random.int(0...6) {
                let name = random.pick(pool)
                if random.chance(60) {
                    names.insert(name)
                    set.insert(name)
                } else {
                    names.remove(name)
                    set.remove(name)
                }
                #expect(names.count == set.count)
            }
        }
    }
}
