import Foundation
import TestSupport
import Testing

/// Damaged stores: every reader says what is damaged, by name, and nothing deletes what the damage hides.
@Suite(.timeLimit(.minutes(10))) struct DamagedStoreTests {
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

    enum DamagedObject: String, CaseIterable { case commit, tree, blob }

    /// How long a command may take on a damaged object before the test takes it for libgit2's endless zlib loop.
    static let damagedObjectDeadline: TimeInterval = 10

    @Test(arguments: DamagedObject.allCases)
    func aTruncatedLooseObjectFailsEveryReaderWithinSecondsNamingIt(_ kind: DamagedObject) throws {
        let store = try CLIStore()
        let id = try store.save("notes/big.md", (1...2000).map { "line \($0)\n" }.joined())
        // Saves write packs; a store git wrote to holds loose objects, which are what this damage is about.
        try unpackObjects(inStore: store.path)
        let object = try git(["-C", store.path, "rev-parse", kind == .commit ? id : kind == .tree ? id + "^{tree}" : id + ":notes/big.md"])
            .output.trimmingCharacters(in: .whitespacesAndNewlines)
        let file = store.path + "/objects/" + object.prefix(2) + "/" + object.dropFirst(2)
        let whole = try Data(contentsOf: URL(fileURLWithPath: file))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file)
        var commands = [["cat", "notes/big.md"], ["prune", "--now"], ["prune"], ["cat", "notes/big.md", "--version", String(id.prefix(8))]]
        if kind != .blob { commands += [["versions", "notes/big.md"], ["log", "notes/big.md"], ["save", "notes/big.md", "-"]] }
        let replica = try CLIStore()
        for length in [2, whole.count / 2, whole.count - 1] {
            try whole.prefix(length).write(to: URL(fileURLWithPath: file))
            // Every command on the damaged store, and a sync from it into another.
            for (arguments, target) in commands.map({ ($0, store.path) }) + [(["sync", store.path], replica.path)] {
                let ending = try #require(
                    try BackgroundProcess(arguments, store: target, input: .text("new\n")).wait(upTo: Self.damagedObjectDeadline),
                    "\(arguments) on a \(kind) cut to \(length) of \(whole.count) bytes ran past \(Self.damagedObjectDeadline)s")
                let lines = ending.errorLines
                #expect(ending.status == 3, "\(arguments), \(kind) cut to \(length): exit \(ending.status) \(ending.errorOutput)")
                #expect(
                    lines.count == 1 && lines[0].hasPrefix("truce: ") && lines[0].contains(object),
                    "\(arguments), \(kind) cut to \(length): \(lines)")
            }
        }
        try whole.write(to: URL(fileURLWithPath: file))
        #expect(try store.run("cat", "notes/big.md").output.hasPrefix("line 1\n"))
        #expect(try Reliability.fsckProblems(store.path) == [])
    }

    /// A save killed while creating its head ref: its reflog entry written, `<id>.lock` holding the id, no ref.
    static func leaveKilledHeadRefCreation(in store: CLIStore, document: String) throws -> String {
        let current = try #require(try store.json("versions", document)["current"] as? [String: Any])["id"] as! String
        let directory = try Self.headReferenceFile(of: current, in: store.path).dropLast(40)
        let orphan = try git(["-C", store.path, "commit-tree", current + "^{tree}", "-p", current, "-m", "killed save"])
            .output.trimmingCharacters(in: .whitespacesAndNewlines)
        let name = String(directory.dropFirst(store.path.count + 1)) + orphan
        #expect(try git(["-C", store.path, "update-ref", name, orphan]).status == 0)
        try FileManager.default.removeItem(atPath: store.path + "/" + name)
        let lock = store.path + "/" + name + ".lock"
        try Data((orphan + "\n").utf8).write(to: URL(fileURLWithPath: lock))
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-60)], ofItemAtPath: lock)
        #expect(try git(["-C", store.path, "gc", "--quiet"]).status != 0, "git gc should fail on the left lock, or the test shows nothing")
        return lock
    }

    @Test(arguments: [["save", "doc.md", "-"], ["prune"]])
    func aHeadRefLockAKilledSaveLeftIsRecoveredByTheNextWriterAndByPrune(_ recovery: [String]) throws {
        let store = try CLIStore()
        try store.save("doc.md", "one\n")
        let lock = try Self.leaveKilledHeadRefCreation(in: store, document: "doc.md")
        let result = try truce(recovery, store: store.path, input: .text("two\n"))
        #expect(result.status == 0, "\(recovery): \(result.errorOutput)")
        #expect(!FileManager.default.fileExists(atPath: lock), "\(recovery) left the stale lock")
        let gc = try git(["-C", store.path, "gc", "--quiet"])
        #expect(gc.status == 0, "git gc after \(recovery): \(gc.errorOutput)")
        #expect(try Reliability.fsckProblems(store.path) == [])
    }
}
