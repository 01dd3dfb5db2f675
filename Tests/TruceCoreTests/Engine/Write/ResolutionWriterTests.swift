import Foundation
import TestSupport
import Testing

@testable import TruceCore

/// An app-defined resolver, written as a third-party plugin would be: upper-cases the current version.
struct ShoutingResolver: Resolver {
    let name = "shout"
    func resolve(_ conflict: ConflictSet, context: ResolutionContext) async throws -> ResolutionOutcome {
        let text = String(decoding: conflict.current.content ?? Data(), as: UTF8.self)
        return .resolved(content: Data((text.uppercased() + (context.options["suffix"] ?? "")).utf8))
    }
}

/// Saves another version while the resolution is being computed, as a second device would.
struct InterruptedResolver: Resolver {
    let name = "interrupted"
    let store: DocumentStore
    func resolve(_ conflict: ConflictSet, context: ResolutionContext) async throws -> ResolutionOutcome {
        try store.save(.text("late\n"), to: conflict.key, device: "late", base: conflict.base?.version.id)
        return .kept(conflict.current.version.id)
    }
}

/// Returns JSON that no longer parses.
struct BrokenJSONResolver: Resolver {
    let name = "broken-json"
    func resolve(_ conflict: ConflictSet, context: ResolutionContext) async throws -> ResolutionOutcome { .resolved(content: .text("{\"a\": ")) }
}

/// Returns the same bytes whatever the conflict.
struct FixedOutputResolver: Resolver {
    let name = "fixed"
    let output: Data
    func resolve(_ conflict: ConflictSet, context: ResolutionContext) async throws -> ResolutionOutcome { .resolved(content: output) }
}

/// Fails as a resolver's own code can: with a Swift error of its own.
struct ThrowingResolver: Resolver {
    struct Broke: Error, CustomStringConvertible {
        var description: String { "it broke" }
    }
    let name = "throwing"
    func resolve(_ conflict: ConflictSet, context: ResolutionContext) async throws -> ResolutionOutcome { throw Broke() }
}

/// Meets a store that fails underneath it, which no fallback may settle around.
struct BusyStoreResolver: Resolver {
    let name = "busy-store"
    func resolve(_ conflict: ConflictSet, context: ResolutionContext) async throws -> ResolutionOutcome { throw TruceError.busy("a test lock") }
}

/// Keeps a version that is not a head of the conflict.
struct KeepsTheBaseResolver: Resolver {
    let name = "keeps-base"
    func resolve(_ conflict: ConflictSet, context: ResolutionContext) async throws -> ResolutionOutcome { .kept(conflict.base!.version.id) }
}

/// Hands every conflict to a person, as list-conflicts does.
struct AskingResolver: Resolver {
    let name = "asking"
    func resolve(_ conflict: ConflictSet, context: ResolutionContext) async throws -> ResolutionOutcome {
        .needsPerson(try ConflictAnalysis(conflict).points)
    }
}

@Suite(.timeLimit(.minutes(10))) struct ResolutionWriterTests {
    @Test func anAppResolverNamedInConfigIsUsedWithItsOptions() async throws {
        let test = try TestStore()
        try test.setAttributes("*.txt merge=shout\n")
        try test.setConfig("resolver.shout.suffix", "!")
        try test.makeConflict("a.txt", base: .text("a"), heads: [("laptop", .text("b")), ("phone", .text("c"))])
        let registry = ResolverRegistry([ShoutingResolver()])
        guard case .resolved(let version, "shout", .settled) = try await test.store.resolve("a.txt", registry: registry, device: "x") else {
            Issue.record("not resolved")
            return
        }
        #expect(try test.store.contents(of: version) == .text("C!"))
    }

    @Test func aSaveThatLandsDuringAResolutionStaysAHead() async throws {
        let test = try TestStore()
        try test.makeConflict("a.txt", base: .text("a\n"), heads: [("laptop", .text("b\n")), ("phone", .text("c\n"))])
        let result = try await test.store.resolve("a.txt", using: InterruptedResolver(store: test.store), device: "x")
        guard case .resolved(let resolution, _, let state) = result else {
            Issue.record("not resolved")
            return
        }
        #expect(state == .inConflict)
        let heads = try test.store.versions(of: "a.txt").heads
        #expect(heads.count == 2)
        #expect(heads.contains { $0.id == resolution.id })
        #expect(heads.contains { $0.deviceName == "late" })
    }

    @Test func outputThatFailsValidationIsNotWrittenAndTheChainGoesOn() async throws {
        let test = try TestStore()
        try test.setAttributes("*.json merge=broken-json\n")
        try test.makeConflict("a.json", base: .text("{}"), heads: [("laptop", .text("{\"a\":1}")), ("phone", .text("{\"b\":2}"))])
        let before = snapshot(ofStore: test.path)
        let registry = ResolverRegistry([BrokenJSONResolver(), NamedResolver(name: "list-conflicts")])
        let result = try await test.store.resolve("a.json", registry: registry, device: "x")
        guard case .needsPerson(_, _, let reasons) = result else {
            Issue.record("\(result)")
            return
        }
        #expect(reasons == ["broken-json: its output is not valid JSON; nothing was written"])
        #expect(snapshot(ofStore: test.path) == before)

        try test.setConfig("resolver.broken-json.fallback", "shout")
        let chained = try await test.store.resolve("a.json", registry: ResolverRegistry([BrokenJSONResolver(), ShoutingResolver()]), device: "x")
        guard case .resolved(_, "shout", _) = chained else {
            Issue.record("\(chained)")
            return
        }
    }

    /// Content of each checked kind that does not parse, with the problem a user is told.
    static let invalidOutputs: [(key: String, content: String, problem: String)] = [
        ("a.json", "{\"a\": ", "not valid JSON"),
        ("a.jsonl", "{\"a\": 1}\n\n{oops\n{\"c\": 3}\n", "not valid JSON Lines: line 3 does not parse"),
        ("a.ndjson", "{\"a\": 1}\r\n[1,\r\n", "not valid JSON Lines: line 2 does not parse"),
        ("a.plist", "<?xml version=\"1.0\"?>\n<plist version=\"1.0\"><dict><key>a</key></plist>\n", "not a property list"),
        ("a.plist", "bplist00\u{1}\u{2}", "not a property list"),
    ]

    @Test(arguments: invalidOutputs)
    func outputOfEveryCheckedKindThatDoesNotParseIsNotWritten(key: String, content: String, problem: String) async throws {
        let test = try TestStore()
        let document = try DocumentKey(key)
        try test.setAttributes("*.\(key.split(separator: ".").last!) merge=fixed\n")
        try test.makeConflict(document, base: .text("{}"), heads: [("laptop", .text("{\"a\":1}")), ("phone", .text("{\"b\":2}"))])
        let before = snapshot(ofStore: test.path)
        let registry = ResolverRegistry([FixedOutputResolver(output: .text(content)), NamedResolver(name: "list-conflicts")])
        let result = try await test.store.resolve(document, registry: registry, device: "x")
        guard case .needsPerson(_, _, let reasons) = result else {
            Issue.record("\(result)")
            return
        }
        #expect(reasons == ["fixed: its output is \(problem); nothing was written"])
        // The same bytes given by a person are refused the same way.
        #expect(throws: TruceError.invalidAnswer("the resolution of \(key) is \(problem); nothing was written")) {
            try test.store.resolve(document, content: .text(content), device: "person")
        }
        #expect(snapshot(ofStore: test.path) == before)
    }

    static let validOutputs: [(key: String, content: Data)] = [
        ("a.json", .text("\"a fragment\"")),
        ("a.jsonl", .text("{\"a\": 1}\n\n  \r\n[2]\n")),
        ("a.ndjson", .text("{\"a\": 1}")),
        ("a.plist", .text("<?xml version=\"1.0\"?>\n<plist version=\"1.0\"><dict><key>a</key><integer>1</integer></dict></plist>\n")),
        ("a.plist", try! PropertyListSerialization.data(fromPropertyList: ["a": 1], format: .binary, options: 0)),
    ]

    @Test(arguments: validOutputs)
    func outputThatParsesPassesValidation(key: String, content: Data) async throws {
        #expect(OutputValidation.problem(with: content, for: try DocumentKey(key)) == nil)
    }

    @Test func dryRunWritesNothing() async throws {
        let test = try TestStore()
        try test.makeConflict("a.txt", base: .text("a"), heads: [("laptop", .text("b")), ("phone", .text("c"))])
        let before = snapshot(ofStore: test.path)
        guard case .wouldResolve(let content, "shout") = try await test.store.resolve("a.txt", using: ShoutingResolver(), device: "x", dryRun: true)
        else {
            Issue.record("no dry run")
            return
        }
        #expect(content == .text("C"))
        #expect(snapshot(ofStore: test.path) == before)
    }

    @Test func optionsGivenWithAResolverReachIt() async throws {
        let test = try TestStore()
        try test.makeConflict("a.txt", base: .text("a"), heads: [("laptop", .text("b")), ("phone", .text("c"))])
        let asked = ResolverOptions(resolverName: "shout", values: ["suffix": "?"])
        func dryRun(_ options: ResolverOptions?) async throws -> Data? {
            let result = try await test.store.resolve("a.txt", using: ShoutingResolver(), options: options, device: "x", dryRun: true)
            guard case .wouldResolve(let content, "shout") = result else {
                Issue.record("\(result)")
                return nil
            }
            return content
        }
        await #expect(try dryRun(asked) == .text("C?"))
        // Given options replace config's for that resolver; without them, config's apply.
        try test.setConfig("resolver.shout.suffix", "!")
        await #expect(try dryRun(asked) == .text("C?"))
        await #expect(try dryRun(nil) == .text("C!"))
        guard
            case .resolved(let version, "shout", .settled) = try await test.store.resolve(
                "a.txt", using: ShoutingResolver(), options: asked, device: "x")
        else {
            Issue.record("not resolved")
            return
        }
        #expect(try test.store.contents(of: version) == .text("C?"))
    }

    @Test func aResolverGivenDirectlySkipsFallbacksTheCallCannotUse() async throws {
        let test = try TestStore()
        try test.makeConflict("a.txt", base: .text("a"), heads: [("laptop", .text("b")), ("phone", .text("c"))])
        try test.makeConflict("b.txt", base: .text("a"), heads: [("laptop", .text("b")), ("phone", .text("c"))])
        // Config chains both to resolvers the one-resolver call has no registry entry or driver for.
        try test.setConfig("resolver.shout.fallback", "list-conflicts")
        try test.setConfig("resolver.passing.fallback", "mergiraf")
        try test.setConfig("merge.mergiraf.driver", "cp %B %A")
        let settled = try await test.store.resolve("a.txt", using: ShoutingResolver(), device: "x")
        guard case .resolved(let version, "shout", .settled) = settled else {
            Issue.record("\(settled)")
            return
        }
        #expect(try test.store.contents(of: version) == .text("C"))

        let before = snapshot(ofStore: test.path)
        let passed = try await test.store.resolve("b.txt", using: NamedResolver(name: "passing"), device: "x")
        guard case .needsPerson(let points, "passing", let reasons) = passed else {
            Issue.record("\(passed)")
            return
        }
        #expect(!points.isEmpty)
        #expect(
            reasons == [
                "passing: test",
                "mergiraf: skipped: not a resolver this call can use (named by resolver.passing.fallback in config)",
            ])
        #expect(snapshot(ofStore: test.path) == before)
    }

    @Test func aResolverThatThrowsHasFailedAndItsFallbackRuns() async throws {
        let test = try TestStore()
        try test.setAttributes("*.txt merge=throwing\n")
        try test.makeConflict("a.txt", base: .text("a"), heads: [("laptop", .text("b")), ("phone", .text("c"))])
        let registry = ResolverRegistry([ThrowingResolver(), ShoutingResolver(), AskingResolver(), NamedResolver(name: "passing")])
        // Nothing after it settles the conflict: it stays in conflict, and the failure is what resolve reports.
        for fallback in [nil, "passing"] {
            if let fallback { try test.setConfig("resolver.throwing.fallback", fallback) }
            let before = snapshot(ofStore: test.path)
            await #expect(throws: TruceError.resolverFailed("throwing", reason: "it broke")) {
                try await test.store.resolve("a.txt", registry: registry, device: "x")
            }
            #expect(snapshot(ofStore: test.path) == before)
        }
        // A fallback that hands it to a person: the failure is one of the reasons.
        try test.setConfig("resolver.throwing.fallback", "asking")
        let before = snapshot(ofStore: test.path)
        let asked = try await test.store.resolve("a.txt", registry: registry, device: "x")
        guard case .needsPerson(let points, "asking", let reasons) = asked else {
            Issue.record("\(asked)")
            return
        }
        #expect(!points.isEmpty)
        #expect(reasons == ["throwing: it failed: it broke"])
        #expect(snapshot(ofStore: test.path) == before)
        // A fallback that settles it runs, as Couchbase Lite falls back to its default resolver.
        try test.setConfig("resolver.throwing.fallback", "shout")
        let settled = try await test.store.resolve("a.txt", registry: registry, device: "x")
        guard case .resolved(let version, "shout", .settled) = settled else {
            Issue.record("\(settled)")
            return
        }
        #expect(try test.store.contents(of: version) == .text("C"))
    }

    @Test func aResolverKeepingAVersionThatIsNoHeadHasFailedAndItsFallbackRuns() async throws {
        let test = try TestStore()
        try test.setAttributes("*.txt merge=keeps-base\n")
        let made = try test.makeConflict("a.txt", base: .text("a"), heads: [("laptop", .text("b")), ("phone", .text("c"))])
        let registry = ResolverRegistry([KeepsTheBaseResolver(), ShoutingResolver()])
        await #expect(throws: TruceError.resolverFailed("keeps-base", reason: "it kept \(made.base.id.short), which is not a head of a.txt")) {
            try await test.store.resolve("a.txt", registry: registry, device: "x")
        }
        try test.setConfig("resolver.keeps-base.fallback", "shout")
        guard case .resolved(_, "shout", .settled) = try await test.store.resolve("a.txt", registry: registry, device: "x") else {
            Issue.record("the fallback did not settle it")
            return
        }
    }

    @Test func aStoreThatFailsUnderAResolverIsReportedNotSettledAround() async throws {
        let test = try TestStore()
        try test.setAttributes("*.txt merge=busy-store\n")
        try test.setConfig("resolver.busy-store.fallback", "shout")
        try test.makeConflict("a.txt", base: .text("a"), heads: [("laptop", .text("b")), ("phone", .text("c"))])
        let before = snapshot(ofStore: test.path)
        await #expect(throws: TruceError.busy("a test lock")) {
            try await test.store.resolve("a.txt", registry: ResolverRegistry([BusyStoreResolver(), ShoutingResolver()]), device: "x")
        }
        #expect(snapshot(ofStore: test.path) == before)
    }

    @Test func aCrashBeforeTheLosersRefsAreDroppedLeavesTheResolutionAsTheOnlyHead() async throws {
        let test = try TestStore()
        let made = try test.makeConflict("a.txt", base: .text("a"), heads: [("laptop", .text("b")), ("phone", .text("c"))])
        guard case .resolved(let resolution, _, _) = try await test.store.resolve("a.txt", using: ShoutingResolver(), device: "x") else {
            Issue.record("the resolver did not settle the conflict")
            return
        }
        // Put back a loser's head ref, as if the process died right after publishing the resolution.
        let loserRef = ReferenceLayout.headReference(of: "a.txt", version: made.heads[0].id)
        _ = try test.git("update-ref", loserRef, made.heads[0].id.hex)
        #expect(try test.store.versions(of: "a.txt").heads.map(\.id) == [resolution.id])
        #expect(try test.store.state(of: "a.txt") == .settled)
    }

    @Test func aCrashBeforeTheResolutionIsPublishedLeavesTheConflict() async throws {
        let test = try TestStore()
        let made = try test.makeConflict("a.txt", base: .text("a"), heads: [("laptop", .text("b")), ("phone", .text("c"))])
        guard case .resolved(let resolution, _, _) = try await test.store.resolve("a.txt", using: ShoutingResolver(), device: "x") else {
            Issue.record("the resolver did not settle the conflict")
            return
        }
        // Undo the reference part of the write: the commit exists, no ref names it.
        for head in made.heads {
            _ = try test.git("update-ref", ReferenceLayout.headReference(of: "a.txt", version: head.id), head.id.hex)
        }
        _ = try test.git("update-ref", "-d", ReferenceLayout.headReference(of: "a.txt", version: resolution.id))
        #expect(try test.store.state(of: "a.txt") == .inConflict)
        #expect(try test.git("fsck", "--strict").contains("error") == false)
    }

    @Test func reopenTurnsTheResolutionBackIntoItsConflict() async throws {
        let test = try TestStore()
        let made = try test.makeConflict("a.txt", base: .text("a"), heads: [("laptop", .text("b")), ("phone", .text("c")), ("tablet", .text("d"))])
        let events = test.store.events
        guard case .resolved(let resolution, _, _) = try await test.store.resolve("a.txt", using: ShoutingResolver(), device: "x") else {
            Issue.record("the resolver did not settle the conflict")
            return
        }
        let reopened = try test.store.reopen("a.txt", device: "laptop")
        #expect(reopened.state == .inConflict)
        // Every settled version is back as a reopening: same content, device and date, the resolution as parent.
        func summary(_ version: Version) throws -> String {
            "\(version.deviceName) \(version.modificationDate) \(try test.store.contents(of: version).map { String(decoding: $0, as: UTF8.self) } ?? "-")"
        }
        #expect(try Set(reopened.heads.map(summary)) == Set(made.heads.map(summary)))
        #expect(reopened.current?.deviceName == made.current.deviceName)
        #expect(reopened.heads.allSatisfy { $0.parents == [resolution.id] && $0.reopened == resolution.id })
        #expect(reopened.base?.id == made.base.id)
        #expect(throws: TruceError.nothingToReopen("b.txt")) {
            try test.store.save(.text("z"), to: "b.txt", device: "x")
            try test.store.reopen("b.txt", device: "laptop")
        }
        let seen = try await firstElements(4, of: events, where: { $0.key == "a.txt" }, waitingFor: "a.txt's resolution and reopenings")
        // One journal entry per reopening, each replayed in turn: the second one brings the conflict back.
        #expect(
            seen.map { "\($0.kind) \($0.previous)→\($0.current)" }
                == ["resolution in conflict→settled", "reopen settled→settled", "reopen settled→in conflict", "reopen in conflict→in conflict"])
        #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)
    }
}
