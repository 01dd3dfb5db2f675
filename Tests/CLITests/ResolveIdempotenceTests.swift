import Foundation
import TestSupport
import Testing

/// `truce resolve DOC` can run after every sync: identical heads are merged as `--all` merges them, a settled document
/// is "nothing to resolve" with exit 0, and only a person's answers for a settled document are an error.
@Suite(.timeLimit(.minutes(10))) struct ResolveIdempotenceTests {
    static let key = "notes/todo.md"

    /// Two devices that saved the same bytes from one base: two heads, no conflict.
    static func identicalHeads() throws -> (CLIStore, SavedConflict) {
        let store = try CLIStore()
        let same = Data.text("the same edit\n")
        let made = try store.saveConflict(key, base: .text("base\n"), heads: [("laptop", same), ("phone", same)])
        return (store, made)
    }

    @Test func identicalHeadsAreMergedIntoTheCommitResolveAllWrites() throws {
        let (one, made) = try Self.identicalHeads()
        // The same store twice: resolve DOC in one, resolve --all in the other.
        let copy = one.directory.file("copy")
        try FileManager.default.copyItem(atPath: one.path, toPath: copy)
        let single = try one.run("resolve", Self.key, "--device", "desk")
        #expect(single.status == 0, "\(single.errorOutput)")
        #expect(single.errorLines.isEmpty, "\(single.errorOutput)")
        let all = try truce(["resolve", "--all", "--device", "desk"], store: copy)
        #expect(all.status == 0, "\(all.errorOutput)")
        let id = try resolutionID(in: single, key: Self.key, resolver: "identical-content")
        #expect(try resolutionID(in: all, key: Self.key, resolver: "identical-content") == id, "\(single.output) \(all.output)")
        // One head now, whose parents are both heads (the current one first), and the content is unchanged.
        let heads = try one.gitInStore("for-each-ref", "--format=%(objectname)", "refs/truce/heads/").output
        #expect(heads == id + "\n")
        #expect(try one.gitInStore("log", "-1", "--format=%P", id).output == made.heads.reversed().joined(separator: " ") + "\n")
        #expect(try one.run("cat", Self.key).output == "the same edit\n")
        #expect(try one.gitInStore("fsck", "--strict").status == 0)
    }

    @Test func aSettledDocumentIsNothingToResolveAndStaysAsItWas() throws {
        let store = try CLIStore()
        let id = try store.save("settled.md", "settled\n")
        try store.save("gone.md", "soon\n")
        let deletion = try store.run("delete", "gone.md").output.trimmingCharacters(in: .whitespacesAndNewlines)
        let before = snapshot(ofStore: store.path)
        for _ in 0..<2 {
            for arguments in [["resolve", "settled.md"], ["resolve", "settled.md", "--dry-run"], ["resolve", "settled.md", "--resolver", "union"]] {
                let result = try truce(arguments, store: store.path)
                #expect(result.status == 0, "\(arguments): \(result.errorOutput)")
                #expect(result.errorLines.isEmpty, "\(arguments): \(result.errorOutput)")
                #expect(result.output == "nothing to resolve: settled.md is settled at \(id)\n", "\(arguments)")
            }
            let deleted = try store.run("resolve", "gone.md")
            #expect(deleted.status == 0 && deleted.output == "nothing to resolve: gone.md is deleted at \(deletion)\n", "\(deleted.output)")
        }
        let json = try store.json("resolve", "settled.md")
        #expect(json["outcome"] as? String == "nothingToResolve")
        #expect(json["state"] as? String == "settled")
        #expect((json["version"] as? [String: Any])?["id"] as? String == id)
        #expect(json["resolver"] == nil)
        #expect(snapshot(ofStore: store.path) == before)
    }

    @Test func resolvingTwiceIsTheSecondTimeNothingToResolve() throws {
        let (store, _) = try ResolveCommandTests.sectionConflict()
        let first = try store.run("resolve", ResolveCommandTests.key)
        #expect(first.status == 0, "\(first.errorOutput)")
        let id = try resolutionID(in: first, key: ResolveCommandTests.key, resolver: "three-way")
        let again = try store.run("resolve", ResolveCommandTests.key)
        #expect(again.status == 0, "\(again.errorOutput)")
        #expect(again.output == "nothing to resolve: \(ResolveCommandTests.key) is settled at \(id)\n")
    }

    @Test func answersForASettledDocumentStayAnError() throws {
        let store = try CLIStore()
        try store.save("settled.md", "settled\n")
        let answer = store.directory.write(.text("answer\n"), to: "answer.txt")
        let before = snapshot(ofStore: store.path)
        for arguments in [["--take", "H1=ours"], ["--content", answer], ["--delete"]] {
            let result = try store.run(["resolve", "settled.md"] + arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.errorLines == ["truce: 'settled.md' is not in conflict"], "\(arguments): \(result.errorOutput)")
        }
        #expect(snapshot(ofStore: store.path) == before)
    }
}

extension CLIStore {
    /// Runs `truce --store <this store> arguments…` with the words in an array.
    func run(_ arguments: [String]) throws -> ProcessResult { try truce(arguments, store: path) }
}
