import Foundation
import TestSupport
import Testing

@testable import TruceGit

/// Commits read in bulk give what reading them one at a time gives.
@Suite(.timeLimit(.minutes(10))) struct ObjectsTests {
    typealias Fixture = PackWriterTests.Fixture

    /// Commits in two packs and one loose, asked for in an order none of them holds: each time is the one
    /// `committerTime(of:)` reads, in the order asked, as `git log` prints it; the same when the reads are divided
    /// between two threads (the loose commit, which no pack holds, read through libgit2 after).
    @Test(arguments: [false, true]) func committerTimesAreEachCommitsInTheOrderAsked(onTwoThreads: Bool) throws {
        let fixture = try Fixture()
        let instrumentation = Instrumentation(fewestDividedOnTwoThreads: onTwoThreads ? 2 : 4096)
        let repository = try Repository.openBare(at: fixture.path, instrumentation: instrumentation)
        let tree = try repository.writeTree([])
        var commits: [ObjectID] = []
        for (index, time) in [1_700_000_300, 1_700_000_100, 1_700_000_200, 5, 1_700_000_000].enumerated() {
            let signature = Signature(name: "Ada", email: "ada@example.com", time: Int64(time), offsetMinutes: 60)
            commits.append(try repository.writeCommit(tree: tree, parents: [], author: signature, committer: signature, message: "\(index)"))
            if index == 1 || index == 3 { try PackWriter(repository: repository).write(commits.suffix(2)) }
        }
        let asked = [commits[4], commits[0], commits[3], commits[2], commits[1], commits[0]]
        let times = try repository.committerTimes(of: asked)
        #expect(times == (try asked.map { try repository.committerTime(of: $0) }))
        let logged = try asked.map { id in
            Int64(try fixture.git("log", "-1", "--format=%ct", id.hex).output.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        #expect(times == logged.compactMap { $0 } && times.count == 6)
        #expect((instrumentation.objectsReadOnASecondThread > 0) == (onTwoThreads && ProcessInfo.processInfo.activeProcessorCount > 1))
    }
}
