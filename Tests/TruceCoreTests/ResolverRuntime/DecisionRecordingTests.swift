import Foundation
import TestSupport
import Testing

@testable import TruceCore

/// Text documents whose first line is settled by the latest head: records the first lines it dropped, in an order
/// of its own (`seed`), as a resolver iterating a dictionary would in another process.
struct FirstLineWins: RestoringResolver {
    let name = "first-line"
    var seed: UInt64 = 1
    /// Decisions recorded at places no head has: how a resolver that records more than it should looks.
    var extraPoints = 0

    func resolve(_ conflict: ConflictSet, context: ResolutionContext) async throws -> ResolutionOutcome {
        let current = conflict.current
        var decisions = [
            ResolutionDecision(
                point: "line 1", rule: "the latest first line stays", kept: .init(current.version, content: Self.firstLine(current.content)),
                dropped: conflict.conflicts.map { .init($0.version, content: Self.firstLine($0.content)) })
        ]
        decisions += (0..<extraPoints).map { index in
            ResolutionDecision(
                point: "extra \(index)", rule: "r", kept: nil, dropped: conflict.conflicts.map { .init($0.version, content: Data("\(index)".utf8)) })
        }
        var random = SeededRandom(seed: seed)
        for index in decisions.indices.reversed() { decisions.swapAt(index, random.int(0...index)) }
        for decision in decisions { context.record(decision) }
        return .resolved(content: current.content)
    }

    func restoring(_ point: String, from dropped: ConflictSet.Side, into current: ConflictSet.Side, context: ResolutionContext) async throws
        -> Data?
    {
        let rest = (current.content ?? Data()).split(separator: 0x0A, maxSplits: 1, omittingEmptySubsequences: false).dropFirst()
        return (Self.firstLine(dropped.content) ?? Data()) + Data([0x0A]) + Data(rest.first ?? Data())
    }

    static func firstLine(_ content: Data?) -> Data? {
        content.map { Data($0.prefix { $0 != 0x0A }) }
    }
}

/// Records a decision, then passes: what it recorded must not reach the resolution its fallback writes.
private struct RecordsThenPasses: Resolver {
    let name = "records-then-passes"
    func resolve(_ conflict: ConflictSet, context: ResolutionContext) async throws -> ResolutionOutcome {
        context.record(.wholeDocument(rule: "never written", kept: conflict.current.version, dropped: conflict.conflicts.map(\.version)))
        return .pass(reason: "it only records")
    }
}

/// Settles with the union of the heads' bytes and records nothing.
private struct Concatenate: Resolver {
    let name = "concatenate"
    func resolve(_ conflict: ConflictSet, context: ResolutionContext) async throws -> ResolutionOutcome {
        .resolved(content: conflict.heads.compactMap(\.content).reduce(Data(), +))
    }
}

/// Keeps the oldest head whole and records nothing: the store records the drop for it.
private struct KeepOldest: Resolver {
    let name = "keep-oldest"
    func resolve(_ conflict: ConflictSet, context: ResolutionContext) async throws -> ResolutionOutcome {
        .kept(conflict.heads.last!.version.id)
    }
}

/// How the store records what resolvers report: only the settling resolver's decisions, in one order, always.
@Suite(.timeLimit(.minutes(10))) struct DecisionRecordingTests {
    static func conflicted() throws -> (TestStore, MadeConflict) {
        let test = try TestStore()
        let made = try test.makeConflict(
            "a.txt", base: .text("title\nbody\n"), heads: [("laptop", .text("laptop title\nbody\n")), ("phone", .text("phone title\nbody\n"))])
        return (test, made)
    }

    static func message(_ test: TestStore, _ version: Version) throws -> String {
        try test.git("show", "-s", "--format=%B", version.id.hex)
    }

    @Test func theSettlingResolversDecisionsAreInTheCommitAndGitShowsThem() async throws {
        let (test, made) = try Self.conflicted()
        let resolution = try #require(try await test.store.resolve("a.txt", using: FirstLineWins(), device: "x").version)
        let message = try Self.message(test, resolution)
        #expect(message.contains("Decisions:\n  at \"line 1\": the latest first line stays\n"), "\(message)")
        #expect(message.contains("    kept \(made.heads[1].id.hex) 2026-11-30T") && message.contains("\"phone\" = phone title\n"))
        #expect(message.contains("    dropped \(made.heads[0].id.hex) ") && message.contains("\"laptop\" = laptop title\n"))
        #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)
    }

    @Test func whatAResolverRecordsBeforeItPassesIsThrownAway() async throws {
        let (test, _) = try Self.conflicted()
        try test.setAttributes("*.txt merge=records-then-passes\n")
        try test.setConfig("resolver.records-then-passes.fallback", "concatenate")
        let result = try await test.store.resolve("a.txt", registry: ResolverRegistry([RecordsThenPasses(), Concatenate()]), device: "x")
        let resolution = try #require(result.version)
        #expect(resolution.resolvedBy == "concatenate")
        #expect(!(try Self.message(test, resolution)).contains("Decisions:"))
    }

    @Test func aResolverThatKeepsOneHeadAndRecordsNothingGetsTheWholeDocumentDecision() async throws {
        let (test, made) = try Self.conflicted()
        let resolution = try #require(try await test.store.resolve("a.txt", using: KeepOldest(), device: "x").version)
        let message = try Self.message(test, resolution)
        #expect(message.contains("Decisions:\n  the whole document: one version kept whole\n    kept \(made.heads[0].id.hex) "), "\(message)")
        #expect(message.contains("    dropped \(made.heads[1].id.hex) "))
        // A resolver that settles with content and records nothing drops nothing the store can know: no section.
        let (other, _) = try Self.conflicted()
        let merged = try #require(try await other.store.resolve("a.txt", using: Concatenate(), device: "x").version)
        #expect(!(try Self.message(other, merged)).contains("Decisions:"))
    }

    /// Two replicas settle the same conflict with resolvers that record in different orders, and past the limit:
    /// the same commit, so sync unions them into one head.
    @Test func replicasThatRecordInDifferentOrdersWriteTheSameCommit() async throws {
        let (laptop, _) = try Self.conflicted()
        let phone = try TestStore()
        _ = try await phone.store.sync(with: laptop.path)
        let resolutions = try await [(laptop, UInt64(1)), (phone, UInt64(2))].asyncMap { replica, seed in
            try #require(try await replica.store.resolve("a.txt", using: FirstLineWins(seed: seed, extraPoints: 1000), device: "d\(seed)").version)
        }
        #expect(resolutions[0].id == resolutions[1].id)
        let message = try Self.message(laptop, resolutions[0])
        #expect(message.contains("more decisions,"), "the decisions past the limit are counted")
        _ = try await phone.store.sync(with: laptop.path)
        #expect(try laptop.store.versions(of: "a.txt").heads.map(\.id) == [resolutions[0].id])
    }

    @Test func nothingRecordedAfterTheStoreTookTheDecisionsCounts() {
        let context = ResolutionContext(options: ResolverOptions(resolverName: "x"), deadline: .now, history: { _ in [] }, content: { _ in nil })
        let version = Version(id: VersionID(hex: String(repeating: "ab", count: 20))!, key: "a", deviceName: "d", modificationDate: Date())
        let decision = ResolutionDecision.wholeDocument(rule: "r", kept: nil, dropped: [version])
        context.record(decision)
        let copy = context
        #expect(copy.closeDecisions() == [decision])
        context.record(decision)
        #expect(context.recordedDecisions == [decision], "a copy of the context shares its record")
    }
}

extension Array where Element: Sendable {
    /// `map` with an async transform, one element after the other.
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
