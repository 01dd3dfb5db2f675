import Foundation
import TestSupport
import Testing
import Truce

@Suite(.timeLimit(.minutes(10))) struct UnionMergeTests {
    @Test func keepsTheLinesOfEveryHeadAsGitUnionDoes() async throws {
        let test = try TestStore()
        try test.setAttributes("*.log merge=union\n")
        try test.makeConflict("a.log", base: .text("start\n"), heads: [("laptop", .text("start\nlaptop\n")), ("phone", .text("start\nphone\n"))])
        let result = try await test.store.resolve("a.log", registry: .standard, device: "x")
        guard case .resolved(let version, "union", _) = result else {
            Issue.record("\(result)")
            return
        }
        let directory = TemporaryDirectory()
        let expected = try git(
            "merge-file", "-p", "--union", directory.write(.text("start\nphone\n"), to: "o"),
            directory.write(.text("start\n"), to: "b"), directory.write(.text("start\nlaptop\n"), to: "t")
        ).stdout
        #expect(try test.store.contents(of: version) == expected)
        #expect(expected == .text("start\nphone\nlaptop\n"))
    }
}
