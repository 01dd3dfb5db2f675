import Foundation
import Testing
import TestSupport

/// Damaged stores: every reader says what is damaged, by name, and nothing deletes what the damage hides.
@Suite struct DamagedStoreTests {
    /// The path of the one head ref file of the version `id`.
    static func headReferenceFile(of id: String, in store: String) throws -> String {
        let listed = try git(["-C", store, "for-each-ref", "--format=%(refname)", "refs/truce/heads/"]).output
        let name = try #require(listed.split(separator: "\n").first { $0.hasSuffix("/" + id) }, "no head ref for \(id)")
        return store + "/" + name
    }

    @Test func aDamagedHeadRefIsReportedByNameAndPruneDeletesNothingUntilItIsRepaired() throws {
        let store = try CLIStore()
        try store.save("kept.md", "kept\n")
        let id = try store.save("damaged.md", "only this ref protects me\n")
        let file = try Self.headReferenceFile(of: id, in: store.path)
        let name = String(file.dropFirst(store.path.count + 1))
        try Data("garbage\n".utf8).write(to: URL(fileURLWithPath: file))
        let before = snapshot(ofStore: store.path)

        for arguments in [["versions", "damaged.md"], ["cat", "damaged.md"], ["prune", "--now"], ["prune"]] {
            let result = try truce(arguments, store: store.path)
            #expect(result.status == 3, "\(arguments) exited \(result.status): \(result.errorOutput)")
            #expect(result.errorLines.count == 1 && result.errorLines.first?.hasPrefix("truce: ") == true, "\(arguments): \(result.errorLines)")
            #expect(result.errorOutput.contains(name), "\(arguments) does not name the damaged ref: \(result.errorOutput)")
        }
        #expect(snapshot(ofStore: store.path) == before, "a refused prune changed the store")
        #expect(try git(["-C", store.path, "cat-file", "-e", id]).status == 0, "the version's commit is gone")

        try Data((id + "\n").utf8).write(to: URL(fileURLWithPath: file))
        let cat = try store.run("cat", "damaged.md")
        #expect(cat.status == 0 && cat.output == "only this ref protects me\n", "after repair: \(cat.errorOutput)")
        #expect(try store.run("prune", "--now").status == 0)
        #expect(try store.run("cat", "damaged.md").output == "only this ref protects me\n")
        #expect(try Reliability.fsckProblems(store.path) == [])
    }
}
