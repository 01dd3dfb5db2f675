import Foundation
import TestSupport
import Testing
import Truce

@Suite(.timeLimit(.minutes(10))) struct DeleteConflictTests {
    static let base = "a\nb\nc\nd\n"

    @Test func byDefaultTheEditWinsAndTheDeletionIsResolved() async throws {
        let test = try TestStore()
        // The deletion is newer, so it is the current version; the policy still keeps the edit.
        let made = try test.makeConflict("n.md", base: .text(Self.base), heads: [("laptop", .text("edited\n")), ("phone", nil)])
        let result = try await test.store.resolve("n.md", registry: .standard, device: "x")
        guard case .resolved(let version, "modify-wins", .settled) = result else {
            Issue.record("\(result)")
            return
        }
        #expect(try test.store.contents(of: "n.md") == .text("edited\n"))
        #expect(version.parents == [made.current.id, made.heads[0].id])
        #expect(version.resolvedBy == "modify-wins")
        #expect(try test.git("rev-parse", "\(version.id.hex)^{tree}") == test.git("rev-parse", "\(made.heads[0].id.hex)^{tree}"))
        #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)
    }

    @Test func deleteWinsSettlesAsADeletionWithEveryHeadAsParent() async throws {
        let test = try TestStore()
        try test.setConfig("truce.deleteConflict", "delete-wins")
        let made = try test.makeConflict(
            "n.md", base: .text(Self.base), heads: [("laptop", nil), ("phone", .text("edited\n")), ("tablet", .text("x\n"))])
        let dryRun = try await test.store.resolve("n.md", registry: .standard, device: "x", dryRun: true)
        guard case .wouldResolve(nil, "delete-wins") = dryRun else {
            Issue.record("\(dryRun)")
            return
        }
        let result = try await test.store.resolve("n.md", registry: .standard, device: "x")
        guard case .resolved(let version, "delete-wins", .deleted) = result else {
            Issue.record("\(result)")
            return
        }
        #expect(version.isDeletion)
        #expect(Set(version.parents) == Set(made.heads.map(\.id)) && version.parents.count == 3)
        #expect(version.parents.first == made.current.id)
    }

    @Test func severalEditsAgainstADeletionStillGoThroughTheChain() async throws {
        let test = try TestStore()
        try test.setAttributes("*.md merge=three-way\n")
        let laptop = Self.base.replacingOccurrences(of: "a\n", with: "A\n")
        let tablet = Self.base.replacingOccurrences(of: "d\n", with: "D\n")
        let made = try test.makeConflict(
            "n.md", base: .text(Self.base), heads: [("laptop", .text(laptop)), ("phone", nil), ("tablet", .text(tablet))])
        let result = try await test.store.resolve("n.md", registry: .standard, device: "x")
        guard case .resolved(let version, "three-way", .settled) = result else {
            Issue.record("\(result)")
            return
        }
        #expect(try test.store.contents(of: version) == .text("A\nb\nc\nD\n"))
        #expect(version.parents == [made.heads[2].id, made.heads[1].id, made.heads[0].id])
        #expect(try test.store.versions(of: "n.md").heads.map(\.id) == [version.id])
    }

    @Test func aPersonDecidesAmongTheEditsAndTheResolutionStillResolvesTheDeletion() async throws {
        let test = try TestStore()
        let made = try test.makeConflict(
            "n.md", base: .text(Self.base),
            heads: [
                ("laptop", .text("a\nlaptop\nc\nd\n")), ("phone", .text("a\nphone\nc\nd\n")), ("tablet", nil),
            ])
        let result = try await test.store.resolve("n.md", registry: .standard, device: "x")
        guard case .needsPerson(let points, "three-way", _) = result else {
            Issue.record("\(result)")
            return
        }
        #expect(points.count == 1 && !points[0].isWholeDocument)
        #expect(points[0].sides.map(\.version) == [made.heads[1].id, made.heads[0].id])
        #expect(try await test.store.conflictPoints(for: "n.md") == points)
        #expect(try test.store.contestedConflictSet(of: "n.md").heads.count == 2)

        let version = try await #require(test.store.resolve("n.md", answering: ["H1": .both], device: "x").version)
        #expect(try test.store.contents(of: version) == .text("a\nphone\nlaptop\nc\nd\n"))
        #expect(version.parents == [made.heads[2].id, made.heads[1].id, made.heads[0].id])
        #expect(try test.store.state(of: "n.md") == .settled)
    }

    @Test func withOneEditThePersonSeesTheWholeConflictAndMayStillDelete() async throws {
        let test = try TestStore()
        let made = try test.makeConflict("n.md", base: .text(Self.base), heads: [("laptop", .text("edited\n")), ("phone", nil)])
        #expect(try test.store.contestedConflictSet(of: "n.md").heads.map(\.version.id) == [made.heads[1].id, made.heads[0].id])
        let version = try await #require(test.store.resolve("n.md", to: nil, device: "x").version)
        #expect(version.isDeletion && version.parents.count == 2)
    }

    @Test(arguments: ["keep-both", "", "modify"])
    func anInvalidPolicyIsAConfigErrorThatChangesNothing(value: String) async throws {
        let test = try TestStore()
        try test.makeConflict("n.md", base: .text(Self.base), heads: [("laptop", .text("edited\n")), ("phone", nil)])
        try test.setConfig("truce.deleteConflict", value)
        let before = snapshot(ofStore: test.path)
        let error = TruceError.invalidConfiguration("truce.deleteConflict = \(value): expected one of modify-wins, delete-wins")
        await #expect(throws: error) { try await test.store.resolve("n.md", registry: .standard, device: "x") }
        #expect(throws: error) { try test.store.resolverChoice(for: "n.md", registry: .standard) }
        #expect(snapshot(ofStore: test.path) == before)
    }

    @Test func thePolicyIsPartOfTheChoiceExplainReports() async throws {
        let test = try TestStore()
        #expect(try test.store.resolverChoice(for: "n.md", registry: .standard).deleteConflict == .modifyWins)
        #expect(try test.store.resolverChoice(for: "n.md", registry: .standard).deleteConflictSource == "default")
        try test.setConfig("truce.deleteConflict", "Delete-Wins")
        let choice = try test.store.resolverChoice(for: "n.md", registry: .standard)
        #expect(choice.deleteConflict == .deleteWins)
        #expect(choice.deleteConflictSource == "truce.deleteConflict = Delete-Wins in config")
    }
}
