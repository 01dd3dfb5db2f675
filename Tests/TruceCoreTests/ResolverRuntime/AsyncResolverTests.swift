import Dispatch
import Foundation
import Synchronization
import TestSupport
import Testing
import TruceCore

/// A resolver that awaits before it answers, as one asking a merge service would: the current version's bytes, shouted.
private struct AwaitingResolver: Resolver {
    let name = "awaiting"
    func resolve(_ conflict: ConflictSet, context: ResolutionContext) async throws -> ResolutionOutcome {
        try await Task.sleep(for: .milliseconds(50))
        return .resolved(content: Data(String(decoding: conflict.current.content ?? Data(), as: UTF8.self).uppercased().utf8))
    }
}

/// What a test resolver saw, kept where the test reads it afterwards.
private final class Record<Value: Sendable>: Sendable {
    let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
    var current: Value { value.withLock { $0 } }
}

/// A resolver that reads the document's history through its context and reports what it saw.
private struct HistoryReader: Resolver {
    let name = "history"
    let seen = Record<[(Version, Data?)]>([])
    func resolve(_ conflict: ConflictSet, context: ResolutionContext) async throws -> ResolutionOutcome {
        var seen: [(Version, Data?)] = []
        for version in try await context.history(limit: Int(context.options["limit"] ?? "10") ?? 10) {
            seen.append((version, try await context.content(of: version)))
        }
        self.seen.value.withLock { $0 = seen }
        return .kept(conflict.current.version.id)
    }
}

/// A resolver that sleeps cooperatively far past any timeout, and records that it was cancelled.
private struct SleepingResolver: Resolver {
    let name = "sleepy"
    let cancelled = Record(false)
    func resolve(_ conflict: ConflictSet, context: ResolutionContext) async throws -> ResolutionOutcome {
        do {
            try await Task.sleep(for: .seconds(60))
        } catch {
            cancelled.value.withLock { $0 = true }
            throw error
        }
        return .resolved(content: Data("too late\n".utf8))
    }
}

/// A resolver that ignores cancellation: it waits ten seconds on a dispatch timer that no task cancellation reaches.
private struct StubbornResolver: Resolver {
    let name = "stubborn"
    func resolve(_ conflict: ConflictSet, context: ResolutionContext) async throws -> ResolutionOutcome {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().asyncAfter(deadline: .now() + 10) { continuation.resume() }
        }
        return .resolved(content: Data("too late\n".utf8))
    }
}

/// The fallback that settles: keeps the current version.
private struct KeepCurrent: Resolver {
    let name = "keep"
    func resolve(_ conflict: ConflictSet, context: ResolutionContext) async throws -> ResolutionOutcome {
        .kept(conflict.current.version.id)
    }
}

/// The fallback that asks a person, so the result carries the reasons of the resolvers before it.
private struct AskPerson: Resolver {
    let name = "ask"
    func resolve(_ conflict: ConflictSet, context: ResolutionContext) async throws -> ResolutionOutcome { .needsPerson([]) }
}

/// Resolvers that await, read history through their context, and overrun their timeout.
@Suite(.timeLimit(.minutes(10))) struct AsyncResolverTests {
    static func conflicted() throws -> (TestStore, MadeConflict) {
        let test = try TestStore()
        let made = try test.makeConflict("a.txt", base: .text("one\n"), heads: [("laptop", .text("two\n")), ("phone", .text("three\n"))])
        return (test, made)
    }

    @Test func aResolverThatAwaitsBeforeAnsweringSettlesTheConflict() async throws {
        let (test, _) = try Self.conflicted()
        let result = try await test.store.resolve("a.txt", using: AwaitingResolver(), device: "x")
        guard case .resolved(let version, "awaiting", .settled) = result else {
            Issue.record("\(result)")
            return
        }
        #expect(try test.store.contents(of: version) == .text("THREE\n"))
    }

    @Test func aResolverReadsTheDocumentsEarlierVersionsThroughItsContext() async throws {
        let test = try TestStore()
        let zero = try test.store.save(.text("zero\n"), to: "a.txt", device: "origin", date: Date(timeIntervalSince1970: 1_795_999_000))
        let made = try test.makeConflict("a.txt", base: .text("one\n"), heads: [("laptop", .text("two\n")), ("phone", .text("three\n"))])
        #expect(made.base.parents == [zero.id])
        let reader = HistoryReader()
        _ = try await test.store.resolve("a.txt", using: reader, device: "x")
        let seen = reader.seen.current
        // Newest first: the two heads, their base, and the version the base was saved from.
        #expect(seen.map(\.0.id) == [made.heads[1].id, made.heads[0].id, made.base.id, zero.id])
        #expect(seen.map(\.1) == [.text("three\n"), .text("two\n"), .text("one\n"), .text("zero\n")])

        let limited = HistoryReader()
        let (other, _) = try Self.conflicted()
        _ = try await other.store.resolve(
            "a.txt", using: limited, options: ResolverOptions(resolverName: "history", values: ["limit": "2"]), device: "x")
        #expect(limited.seen.current.count == 2)
    }

    @Test func aResolverThatNeverFinishesIsCancelledAtItsTimeoutAndTheFallbackSettles() async throws {
        let (test, made) = try Self.conflicted()
        try test.setAttributes("*.txt merge=sleepy\n")
        try test.setConfig("resolver.sleepy.timeout", "0.3")
        try test.setConfig("resolver.sleepy.fallback", "keep")
        let sleepy = SleepingResolver()
        var result: ResolveResult?
        let elapsed = try await secondsOffThePool {
            result = try await test.store.resolve("a.txt", registry: ResolverRegistry([sleepy, KeepCurrent()]), device: "x")
        }
        #expect(elapsed < 10)
        guard case .resolved(let version, "keep", .settled) = try #require(result) else {
            Issue.record("\(String(describing: result))")
            return
        }
        #expect(version.parents == [made.current.id, made.heads[0].id])
        #expect(sleepy.cancelled.current, "the resolver's task is cancelled at the deadline")

        // With a fallback that asks a person, the reasons name the timeout.
        let (asking, _) = try Self.conflicted()
        try asking.setAttributes("*.txt merge=sleepy\n")
        try asking.setConfig("resolver.sleepy.timeout", "0.3")
        try asking.setConfig("resolver.sleepy.fallback", "ask")
        let needs = try await asking.store.resolve("a.txt", registry: ResolverRegistry([SleepingResolver(), AskPerson()]), device: "x")
        guard case .needsPerson(_, "ask", let reasons) = needs else {
            Issue.record("\(needs)")
            return
        }
        #expect(reasons == ["sleepy: it failed: it did not finish within 0.3 s"])
    }

    @Test func aResolverThatIgnoresCancellationDoesNotHoldResolvePastItsDeadline() async throws {
        let (test, _) = try Self.conflicted()
        try test.setAttributes("*.txt merge=stubborn\n")
        try test.setConfig("resolver.stubborn.timeout", "0.2")
        let before = snapshot(ofStore: test.path)
        var failure: (any Error)?
        let elapsed = await secondsOffThePool {
            do { _ = try await test.store.resolve("a.txt", registry: ResolverRegistry([StubbornResolver()]), device: "x") } catch { failure = error }
        }
        #expect(failure as? TruceError == .resolverFailed("stubborn", reason: "it did not finish within 0.2 s"))
        // The deadline and the second of grace, not the resolver's ten seconds.
        #expect(elapsed < 5)
        #expect(snapshot(ofStore: test.path) == before)
    }

    @Test func aBadTimeoutIsAConfigError() async throws {
        let (test, _) = try Self.conflicted()
        try test.setAttributes("*.txt merge=keep\n")
        try test.setConfig("resolver.keep.timeout", "soon")
        await #expect(throws: TruceError.invalidConfiguration("resolver.keep.timeout = soon: expected a number from 0.1 to 86400")) {
            try await test.store.resolve("a.txt", registry: ResolverRegistry([KeepCurrent()]), device: "x")
        }
    }

    @Test func aPersonsResolutionIsResolvedByPerson() async throws {
        let (test, made) = try Self.conflicted()
        let result = try await test.store.resolve("a.txt", to: .text("by hand\n"), device: "me")
        guard case .resolved(let version, DocumentStore.personResolverName, .settled) = result else {
            Issue.record("\(result)")
            return
        }
        #expect(version.resolvedBy == "person")
        #expect(version.parents == [made.current.id, made.heads[0].id])

        let (other, _) = try Self.conflicted()
        try other.setAttributes("*.txt merge=keep\n")
        let answers = Dictionary(
            uniqueKeysWithValues: try await other.store.conflictPoints(for: "a.txt", registry: ResolverRegistry([KeepCurrent()])).map {
                ($0.id, HunkAnswer.ours)
            })
        let answered = try await other.store.resolve("a.txt", answering: answers, registry: ResolverRegistry([KeepCurrent()]), device: "me")
        guard case .resolved(let resolution, "person", .settled) = answered else {
            Issue.record("\(answered)")
            return
        }
        #expect(try other.store.contents(of: resolution) == .text("three\n"))
    }
}
