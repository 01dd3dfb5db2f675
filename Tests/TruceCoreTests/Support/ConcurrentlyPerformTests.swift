import Foundation
import Synchronization
import TestSupport
import Testing

/// The benchmark's parallel loop: every index runs, and a failure in any of them is thrown, never dropped.
@Suite(.timeLimit(.minutes(10))) struct ConcurrentlyPerformTests {
    struct Failed: Error, Equatable {
        let index: Int
    }

    @Test func everyIndexRunsOnceWhenNoneFails() throws {
        let seen = Mutex([Int]())
        try concurrentlyPerform(500, workers: 4) { index in seen.withLock { $0.append(index) } }
        #expect(seen.withLock { $0.sorted() } == Array(0..<500))
    }

    @Test(arguments: [0, 137, 499])
    func aFailureInAnyIndexIsThrown(failing: Int) throws {
        #expect(throws: Failed(index: failing)) {
            try concurrentlyPerform(500, workers: 4) { index in if index == failing { throw Failed(index: index) } }
        }
    }

    @Test func theLowestFailingIndexIsTheOneThrown() throws {
        #expect(throws: Failed(index: 3)) {
            try concurrentlyPerform(100, workers: 1) { index in if index >= 3 { throw Failed(index: index) } }
        }
    }
}
