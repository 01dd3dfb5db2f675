import Foundation
import TestSupport
import Testing
import Truce

/// Two replicas and one conflict: what each replica writes, and what sync makes of it.
@Suite(.timeLimit(.minutes(10))) struct ReplicaConvergenceTests {
    /// Two replicas with a document saved on `a` and synced to `b`, then edited concurrently on both.
    struct Pair {
        let directory = TemporaryDirectory("truce-pair")
        let a: DocumentStore
        let b: DocumentStore
        let base: Version

        init(
            key: DocumentKey = "notes/todo.md", base: String = "one\ntwo\nthree\nfour\nfive\n", onA: String? = "ONE\ntwo\nthree\nfour\nfive\n",
            onB: String? = "one\ntwo\nthree\nfour\nFIVE\n"
        ) throws {
            a = try DocumentStore.create(at: directory.file("a"))
            b = try DocumentStore.create(at: directory.file("b"))
            let start = Date(timeIntervalSince1970: 1_796_000_000)
            self.base = try a.save(Data(base.utf8), to: key, device: "laptop", date: start).version
            _ = try a.sync(with: b.path)
            if let onA { try a.save(Data(onA.utf8), to: key, device: "laptop", date: start.addingTimeInterval(60)) }
            if let onB { try b.save(Data(onB.utf8), to: key, device: "phone", date: start.addingTimeInterval(120)) }
            _ = try a.sync(with: b.path)
        }
    }

    static func resolvedVersion(_ result: ResolveResult) throws -> Version {
        guard case .resolved(let version, _, _) = result else { throw TestFailure("not resolved: \(result)") }
        return version
    }

    @Test func theSameConflictResolvedOnTwoReplicasIsOneCommit() async throws {
        let pair = try Pair()
        #expect(try pair.a.state(of: "notes/todo.md") == .inConflict)
        let onA = try await Self.resolvedVersion(pair.a.resolve("notes/todo.md", registry: .standard, device: "laptop"))
        let onB = try await Self.resolvedVersion(pair.b.resolve("notes/todo.md", registry: .standard, device: "phone"))
        #expect(onA.id == onB.id)
        _ = try await pair.a.sync(with: pair.b.path)
        for store in [pair.a, pair.b] {
            let versions = try store.versions(of: "notes/todo.md")
            #expect(versions.allHeads.map(\.id) == [onA.id])
        }
        // Who ran it is on record in each store's own journal, not in the commit.
        #expect(try pair.a.changes().changes.contains { $0.kind == .resolution && $0.version == onA.id && $0.author == "laptop" })
        #expect(try pair.b.changes().changes.contains { $0.kind == .resolution && $0.version == onA.id && $0.author == "phone" })
    }

    @Test func aPersonsAnswersGivenAlikeOnTwoReplicasAreOneCommit() async throws {
        let pair = try Pair(onA: "one\nTWO laptop\nthree\n", onB: "one\nTWO phone\nthree\n")
        let answersA = try await pair.a.conflictPoints(for: "notes/todo.md").map { ($0.id, HunkAnswer.both) }
        let answersB = try await pair.b.conflictPoints(for: "notes/todo.md").map { ($0.id, HunkAnswer.both) }
        #expect(!answersA.isEmpty)
        let onA = try await #require(pair.a.resolve("notes/todo.md", answering: Dictionary(uniqueKeysWithValues: answersA), device: "laptop").version)
        let onB = try await #require(pair.b.resolve("notes/todo.md", answering: Dictionary(uniqueKeysWithValues: answersB), device: "phone").version)
        #expect(onA.id == onB.id)
        #expect(onA.resolvedBy == DocumentStore.personResolverName)
        // A whole edited file given alike on two devices is one commit too.
        let other = try Pair(onA: "one\nTWO laptop\nthree\n", onB: "one\nTWO phone\nthree\n")
        let edited = Data("one\nTWO by hand\nthree\n".utf8)
        await #expect(
            try other.a.resolve("notes/todo.md", to: edited, device: "laptop").version?.id
                == other.b.resolve("notes/todo.md", to: edited, device: "phone").version?.id)
    }

    @Test func twoDifferentResolutionsAreOneMoreConflictThatSettlesOnce() async throws {
        let pair = try Pair()
        let onA = try await Self.resolvedVersion(
            pair.a.resolve("notes/todo.md", registry: .standard, resolverName: "overwrite-with-current", device: "laptop"))
        let onB = try await Self.resolvedVersion(pair.b.resolve("notes/todo.md", registry: .standard, resolverName: "three-way", device: "phone"))
        #expect(onA.id != onB.id)
        _ = try await pair.a.sync(with: pair.b.path)
        #expect(try pair.a.state(of: "notes/todo.md") == .inConflict)
        let again = try await Self.resolvedVersion(pair.a.resolve("notes/todo.md", registry: .standard, device: "laptop"))
        #expect(Set(again.parents) == [onA.id, onB.id])
        _ = try await pair.b.sync(with: pair.a.path, resolving: .standard, device: "phone")
        for store in [pair.a, pair.b] {
            #expect(try store.versions(of: "notes/todo.md").allHeads.map(\.id) == [again.id])
            #expect(try store.history(of: "notes/todo.md").filter(\.isResolution).count == 3)
        }
    }

    @Test func reopenHoldsAcrossSyncOnEveryReplica() async throws {
        let pair = try Pair()
        let resolution = try await Self.resolvedVersion(pair.a.resolve("notes/todo.md", registry: .standard, device: "laptop"))
        _ = try await pair.a.sync(with: pair.b.path)
        #expect(try pair.b.state(of: "notes/todo.md") == .settled)
        try pair.a.reopen("notes/todo.md", device: "laptop")
        _ = try await pair.b.sync(with: pair.a.path)
        _ = try await pair.a.sync(with: pair.b.path)
        for store in [pair.a, pair.b] {
            let versions = try store.versions(of: "notes/todo.md")
            #expect(versions.state == .inConflict)
            #expect(versions.allHeads.allSatisfy { $0.reopened == resolution.id })
            #expect(versions.base?.id == pair.base.id, "the reopened conflict merges against the base its versions had")
        }
        // Resolving it again with the same resolver settles it again, on both.
        let again = try await Self.resolvedVersion(pair.b.resolve("notes/todo.md", registry: .standard, device: "phone"))
        #expect(try pair.b.contents(of: again) == pair.a.contents(of: resolution))
    }

    @Test func headsWithIdenticalContentAreNoConflictAndTheNextSaveSupersedesThem() async throws {
        let same = "one\nTWO\nthree\n"
        let pair = try Pair(onA: same, onB: same)
        let versions = try pair.a.versions(of: "notes/todo.md")
        #expect(versions.state == .settled)
        #expect(versions.conflicts.isEmpty && versions.equivalents.count == 1)
        #expect(try pair.a.documentsInConflict().isEmpty)
        #expect(try pair.a.explain("notes/todo.md").currentReason.contains("identical content"))
        let next = try pair.a.save(Data("four\n".utf8), to: "notes/todo.md", device: "laptop")
        #expect(Set(next.parents) == Set(versions.allHeads.map(\.id)))
        #expect(try pair.a.versions(of: "notes/todo.md").allHeads.map(\.id) == [next.id])
    }

    @Test func resolveAllCollapsesIdenticalHeadsIntoTheSameCommitOnEveryReplica() async throws {
        let same = "one\nTWO\nthree\n"
        let pair = try Pair(onA: same, onB: same)
        let onA = try await pair.a.resolveAll(registry: .standard, device: "laptop")
        let onB = try await pair.b.resolveAll(registry: .standard, device: "phone")
        let a = try Self.resolvedVersion(try #require(onA["notes/todo.md"]))
        let b = try Self.resolvedVersion(try #require(onB["notes/todo.md"]))
        #expect(a.id == b.id)
        #expect(a.resolvedBy == DocumentStore.identicalContentResolverName)
        #expect(try pair.a.contents(of: a) == Data(same.utf8))
    }

    @Test func aCrissCrossMergesAgainstTheRecursiveMergeOfItsBases() async throws {
        // a and b settle {x, y}; b also has z, so it settles {x, y, z}: the two resolutions have two merge bases.
        let key: DocumentKey = "notes/todo.md"
        let pair = try Pair(key: key, base: "1\n2\n3\n4\n5\n6\n7\n", onA: "1 x\n2\n3\n4\n5\n6\n7\n", onB: "1\n2\n3\n4 y\n5\n6\n7\n")
        let first = try await Self.resolvedVersion(pair.a.resolve(key, registry: .standard, device: "laptop"))
        let z = try pair.b.save(
            Data("1\n2\n3\n4 y\n5\n6\n7 z\n".utf8), to: key, device: "tablet", base: pair.base.id,
            date: Date(timeIntervalSince1970: 1_796_000_300))
        let second = try await Self.resolvedVersion(pair.b.resolve(key, registry: .standard, device: "phone"))
        #expect(second.parents.count == 3 && second.parents.contains(z.id))
        _ = try await pair.a.sync(with: pair.b.path)
        let conflict = try pair.a.conflictSet(of: key)
        #expect(Set(conflict.heads.map(\.version.id)) == [first.id, second.id])
        #expect(conflict.base?.content == Data("1 x\n2\n3\n4 y\n5\n6\n7\n".utf8), "the virtual base is the merge of x and y")
        let settled = try await Self.resolvedVersion(pair.a.resolve(key, registry: .standard, device: "laptop"))
        #expect(try pair.a.contents(of: settled) == Data("1 x\n2\n3\n4 y\n5\n6\n7 z\n".utf8))
    }
}

extension ReplicaConvergenceTests {
    @Test func aNewVersionOfTheRoutingIsReadByAStoreThatAlreadyReadTheOldOne() async throws {
        let test = try TestStore()
        try test.store.save(Data("*.md merge=overwrite-with-current\n".utf8), to: ".truce/attributes", device: "laptop")
        #expect(try test.store.resolverChoice(for: "a.md", registry: .standard).chain == ["overwrite-with-current"])
        try test.store.save(Data("*.md merge=union\n".utf8), to: ".truce/attributes", device: "phone")
        try test.store.save(Data("[resolver \"union\"]\n\tfallback = list-conflicts\n".utf8), to: ".truce/config", device: "phone")
        #expect(try test.store.resolverChoice(for: "a.md", registry: .standard).chain == ["union", "list-conflicts"])
        try test.store.delete(".truce/attributes", device: "phone")
        #expect(try test.store.resolverChoice(for: "a.md", registry: .standard).chain == ["three-way"])
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
