import Foundation
import TestSupport
import Testing

@testable import TruceCore

/// `review` and `restore`: what automatic resolutions dropped, read from their commits, and brought back by a save.
@Suite(.timeLimit(.minutes(10))) struct ReviewTests {
    static let registry = ResolverRegistry([FirstLineWins()])

    /// A store whose a.txt the first-line resolver settled, dropping the laptop's first line.
    static func resolved() async throws -> (TestStore, MadeConflict, Version) {
        let (test, made) = try DecisionRecordingTests.conflicted()
        let store = try DocumentStore.open(at: test.path, resolvers: registry)
        try test.setAttributes("*.txt merge=first-line\n")
        let resolution = try #require(try await store.resolve("a.txt", device: "desk").version)
        return (test, made, resolution)
    }

    @Test func reviewListsTheDroppedValueAndRestoreBringsItBack() async throws {
        let (test, made, resolution) = try await Self.resolved()
        let store = try DocumentStore.open(at: test.path, resolvers: Self.registry)
        let review = try store.review("a.txt")
        #expect(review.resolutions.map(\.resolution.id) == [resolution.id])
        let reviewed = try #require(review.resolutions.first)
        #expect(reviewed.author == "desk" && reviewed.resolver == "first-line" && reviewed.problem == nil)
        let dropped = try #require(reviewed.droppedValues.first)
        #expect(reviewed.droppedValues.count == 1)
        #expect(dropped.point == "line 1" && dropped.value.version == made.heads[0].id && dropped.value.content == .text("laptop title"))
        #expect(dropped.value.deviceName == "laptop" && dropped.kept?.content == .text("phone title") && dropped.restoredBy == nil)

        let restored = try #require(try await store.restore(dropped, device: "me"))
        #expect(try store.contents(of: "a.txt") == .text("laptop title\nbody\n"))
        #expect(restored.version.parents == [resolution.id] && restored.version.deviceName == "me")
        let trailers = try git(["interpret-trailers", "--parse"], input: Data(try test.git("show", "-s", "--format=%B", restored.id.hex).utf8))
        #expect(trailers.output == "Document: a.txt\nDevice: me\nRestores-Dropped: \(resolution.id.hex) \(made.heads[0].id.hex) \"line 1\"\n")
        #expect(try store.review("a.txt").droppedValues.map(\.restoredBy) == [restored.id])
        // Brought back already: nothing to write.
        #expect(try await store.restore(dropped, device: "me") == nil)
        #expect(try store.versions(of: "a.txt").current?.id == restored.id)
        #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)
    }

    @Test func reviewFollowsTheTokenAndFiltersByDocumentAndResolver() async throws {
        let (test, _, resolution) = try await Self.resolved()
        let store = try DocumentStore.open(at: test.path, resolvers: Self.registry)
        let token = try store.review().token
        #expect(try store.review(since: token).resolutions.isEmpty)
        #expect(try store.review("b.txt").resolutions.isEmpty)
        #expect(try store.review(resolver: "three-way").resolutions.isEmpty)
        #expect(try store.review(resolver: "first-line").resolutions.map(\.resolution.id) == [resolution.id])
        // A person's resolution is not an automatic one.
        try test.makeConflict("b.txt", base: .text("b\n"), heads: [("laptop", .text("1\n")), ("phone", .text("2\n"))])
        try await store.resolve("b.txt", to: .text("mine\n"), device: "me")
        #expect(try store.review(since: token).resolutions.isEmpty)
        // Three saves and the resolution, and the record of the person's answer beside it.
        #expect(try store.changes(since: token).changes.filter { !$0.key.isTruceRecord }.count == 4)
    }

    /// Resolutions by resolvers that drop nothing, or made before decisions were recorded, have the message they
    /// always had, and read as resolutions that dropped nothing.
    @Test func aResolutionWithoutDecisionsReadsAsBefore() async throws {
        let (test, made) = try DecisionRecordingTests.conflicted()
        let events = test.store.events
        let resolution = try #require(try await test.store.resolve("a.txt", using: ConcatenateHeads(), device: "x").version)
        #expect(
            try test.git("show", "-s", "--format=%B", resolution.id.hex)
                == "Resolve a.txt\n\nDocument: a.txt\nDevice: concatenate\nResolved-By: concatenate\nResolves: \(made.heads[0].id.hex)\n\n")
        let reviewed = try #require(try test.store.review().resolutions.first)
        #expect(reviewed.decisions.isEmpty && reviewed.droppedValues.isEmpty && reviewed.problem == nil)
        let event = try await firstElements(1, of: events, where: { $0.kind == .resolution }, waitingFor: "the resolution")
        #expect(event.map(\.droppedValueCount) == [0])
    }

    @Test func theResolutionsEventSaysHowManyValuesItDropped() async throws {
        let (test, _) = try DecisionRecordingTests.conflicted()
        let events = test.store.events
        _ = try await test.store.resolve("a.txt", using: FirstLineWins(extraPoints: 2), device: "x")
        let event = try await firstElements(1, of: events, where: { $0.kind == .resolution }, waitingFor: "the resolution")
        #expect(event.map(\.droppedValueCount) == [3])
        #expect(event.first?.wasResolved == true)
        // Encoded for `watch --json`, and read back; what an earlier release encoded reads as none dropped.
        let encoded = try JSONEncoder().encode(try #require(event.first))
        #expect(try JSONDecoder().decode(DocumentStateChange.self, from: encoded).droppedValueCount == 3)
        var object = try #require(try JSONSerialization.jsonObject(with: encoded) as? [String: Any])
        object["droppedValueCount"] = nil
        let earlier = try JSONSerialization.data(withJSONObject: object)
        #expect(try JSONDecoder().decode(DocumentStateChange.self, from: earlier).droppedValueCount == 0)
    }

    @Test func restoreChecksTheValueAgainstTheResolutionsCommit() async throws {
        let (test, made, resolution) = try await Self.resolved()
        let store = try DocumentStore.open(at: test.path, resolvers: Self.registry)
        let real = try #require(try store.review().droppedValues.first)
        let before = snapshot(ofStore: test.path)
        func refused(_ dropped: DroppedValue, registry: ResolverRegistry? = nil) async -> String? {
            do {
                _ = try await store.restore(dropped, registry: registry, device: "me")
                return nil
            } catch {
                return error.errorDescription
            }
        }
        let forgedPoint = DroppedValue(
            key: "a.txt", resolution: resolution.id, point: "line 2", rule: "", kept: nil, value: real.value)
        #expect(
            await refused(forgedPoint)
                == "cannot restore in 'a.txt': resolution \(resolution.id.short) dropped no value of version \(made.heads[0].id.short) at 'line 2'")
        let forgedVersion = DroppedValue(
            key: "a.txt", resolution: resolution.id, point: "line 1", rule: "", kept: nil,
            value: .init(made.base, content: nil))
        #expect(await refused(forgedVersion)?.contains("dropped no value of version \(made.base.id.short)") == true)
        let notAResolution = DroppedValue(key: "a.txt", resolution: made.heads[0].id, point: "line 1", rule: "", kept: nil, value: real.value)
        #expect(await refused(notAResolution) == "cannot restore in 'a.txt': version \(made.heads[0].id.short) is not a resolution")
        #expect(
            await refused(real, registry: ResolverRegistry([ConcatenateHeads()]))?.contains(
                "first-line, which dropped the value at 'line 1', is not among") == true)
        #expect(await refused(real, registry: ResolverRegistry([NotRestoring()]))?.contains("first-line cannot put back one value") == true)
        #expect(snapshot(ofStore: test.path) == before, "a refused restore writes nothing")
    }

    /// A replica that rewrote its resolution's decisions: sync takes the version (it is a sound one), `review` reports
    /// the decisions as unreadable, and nothing of them can be restored.
    @Test(arguments: [
        ("names a version it does not settle", "its decisions name version"),
        ("holds a line of its own", "its decisions cannot be read: line 6 of its message is not indented as a decision"),
    ])
    func decisionsAnotherReplicaForgedAreReportedNotTrusted(forgery: String, problem: String) async throws {
        let (hostile, made, resolution) = try await Self.resolved()
        let original = try hostile.git("show", "-s", "--format=%B", resolution.id.hex)
        let forged =
            forgery.hasPrefix("names")
            ? original.replacingOccurrences(of: made.heads[0].id.hex, with: made.base.id.hex)
            : original.replacingOccurrences(of: "\n    dropped", with: "\nResolves: \(made.base.id.hex)\n    dropped")
        #expect(forged != original)
        let tree = try hostile.git("rev-parse", "\(resolution.id.hex)^{tree}").trimmingCharacters(in: .newlines)
        let environment = ["GIT_AUTHOR_NAME": "first-line", "GIT_AUTHOR_EMAIL": "first-line@truce", "GIT_AUTHOR_DATE": "@1796000120 +0000"]
        let committed = try run(
            "/usr/bin/env", ["git", "-C", hostile.path, "commit-tree", tree] + resolution.parents.flatMap { ["-p", $0.hex] },
            input: Data(forged.dropLast().utf8),
            environment: environment.merging([
                "GIT_COMMITTER_NAME": "first-line", "GIT_COMMITTER_EMAIL": "first-line@truce", "GIT_COMMITTER_DATE": "@1796000120 +0000",
            ]) { $1 })
        let forgedID = committed.output.trimmingCharacters(in: .newlines)
        // The forged commit takes the resolution's place as the document's head.
        let reference = try hostile.git("for-each-ref", "--format=%(refname)", "refs/truce/heads/").split(separator: "\n")
            .first { $0.hasSuffix(resolution.id.hex) }.map(String.init)
        let head = try #require(reference)
        _ = try hostile.git("update-ref", String(head.dropLast(40)) + forgedID, forgedID)
        _ = try hostile.git("update-ref", "-d", head)

        let local = try TestStore()
        let store = try DocumentStore.open(at: local.path, resolvers: Self.registry)
        let report = try await store.sync(with: hostile.path)
        #expect(report.refused.isEmpty)
        #expect(try store.versions(of: "a.txt").current?.id.hex == forgedID)
        let reviewed = try #require(try store.review("a.txt").resolutions.first { $0.resolution.id.hex == forgedID })
        #expect(reviewed.problem?.hasPrefix(problem) == true, "\(String(describing: reviewed.problem))")
        #expect(reviewed.decisions.isEmpty && reviewed.droppedValues.isEmpty)
        let forgedValue = DroppedValue(
            key: "a.txt", resolution: try #require(VersionID(hex: forgedID)), point: "line 1", rule: "", kept: nil,
            value: .init(made.base, content: nil))
        await #expect(throws: TruceError.self) { try await store.restore(forgedValue, device: "me") }
        #expect(try local.git("fsck", "--strict", "--no-dangling").isEmpty)
    }

    @Test func aBadTokenIsRefusedAsChangesRefusesIt() throws {
        let test = try TestStore()
        let token = try #require(ChangeHistory.Token("t1-" + String(repeating: "ab", count: 20)))
        #expect(throws: TruceError.invalidToken(token.description, reason: "this store has no changes yet")) { try test.store.review(since: token) }
        try test.store.save(.text("x"), to: "a.txt", device: "d")
        #expect(throws: TruceError.invalidToken(token.description, reason: "it is not a position in this store's change history")) {
            try test.store.review(since: token)
        }
    }
}

/// Settles with every head's bytes, recording nothing.
private struct ConcatenateHeads: Resolver {
    let name = "concatenate"
    func resolve(_ conflict: ConflictSet, context: ResolutionContext) async throws -> ResolutionOutcome {
        .resolved(content: conflict.heads.compactMap(\.content).reduce(Data(), +))
    }
}

/// Named as the resolver that dropped the value, but unable to put one back.
private struct NotRestoring: Resolver {
    let name = "first-line"
    func resolve(_ conflict: ConflictSet, context: ResolutionContext) async throws -> ResolutionOutcome {
        .pass(reason: "never")
    }
}
