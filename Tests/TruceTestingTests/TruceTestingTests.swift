import Foundation
import LastWriterWins
import TestSupport
import Testing
import ThreeWayMerge
import TruceCore
import TruceTesting

/// The testing kit as a resolver's author uses it: conflicts in memory for unit tests, fabricated stores for integration tests.
@Suite(.timeLimit(.minutes(10))) struct TruceTestingTests {
    static let shopping = ConflictFixture(
        key: "lists/shop.todo",
        base: FixtureVersion("- [ ] milk\n- [ ] eggs\n", device: "laptop", date: ConflictFixture.date(minute: 0)),
        current: FixtureVersion("- [x] milk\n- [ ] eggs\n", device: "phone", date: ConflictFixture.date(minute: 10)),
        conflicts: [FixtureVersion("- [ ] milk\n- [ ] eggs\n- [ ] bread\n", device: "laptop", date: ConflictFixture.date(minute: 5))]
    )

    // MARK: unit tests of a resolver, in memory

    @Test func aResolverIsUnitTestedOnAConflictInMemory() async throws {
        let outcome = try await Self.shopping.resolve(with: TodoListMerge())
        #expect(outcome.resolvedContent == .text("- [x] milk\n- [ ] eggs\n- [ ] bread\n"), "\(outcome)")

        let last = try await Self.shopping.resolve(with: TodoListMerge(), options: ["checked": "last"])
        #expect(last.resolvedContent == .text("- [ ] eggs\n- [ ] bread\n- [x] milk\n"), "\(last)")

        await #expect(throws: TruceError.invalidConfiguration("resolver.todo-list.checked = first: expected one of keep, last")) {
            try await Self.shopping.resolve(with: TodoListMerge(), options: ["checked": "first"])
        }
    }

    @Test func aHeadTheResolverCannotReadIsItsErrorNamingTheVersion() async throws {
        let fixture = ConflictFixture(
            key: "a.todo", base: FixtureVersion("- [ ] a\n", device: "laptop", date: ConflictFixture.date(minute: 0)),
            current: FixtureVersion("- [ ] a\n- [ ] b\n", device: "phone", date: ConflictFixture.date(minute: 2)),
            conflicts: [FixtureVersion("not a list\n", device: "laptop", date: ConflictFixture.date(minute: 1))])
        let laptop = try fixture.conflictSet().conflicts[0].version.id
        await #expect(throws: TruceError.malformedContent("a.todo", version: laptop, reason: "is not a to-do list")) {
            try await fixture.resolve(with: TodoListMerge())
        }
    }

    @Test func theConflictSetIsTheOneTheStoreWouldGiveAndTheSameOnEveryBuild() async throws {
        let fixture = ConflictFixture(
            key: "notes/todo.md",
            base: FixtureVersion("a\n", device: "origin", date: ConflictFixture.date(minute: 0)),
            current: FixtureVersion("b\n", device: " phone ", date: ConflictFixture.date(minute: 3).addingTimeInterval(0.75)),
            conflicts: [
                FixtureVersion("c\n", device: "laptop", date: ConflictFixture.date(minute: 1)),
                FixtureVersion("d\n", device: "watch", date: ConflictFixture.date(minute: 2)),
                FixtureVersion("b\n", device: "tablet", date: ConflictFixture.date(minute: 1)),
            ])
        let set = try fixture.conflictSet()
        #expect(set.current.version.deviceName == "phone", "trimmed as a store trims it")
        #expect(set.current.version.modificationDate == ConflictFixture.date(minute: 3), "to the second")
        #expect(set.conflicts.map(\.version.deviceName) == ["watch", "laptop"], "newest first")
        #expect(set.conflicts.allSatisfy(\.version.isConflict) && !set.current.version.isConflict)
        #expect(set.equivalents.map(\.deviceName) == ["tablet"], "the tablet's head holds the current version's bytes")
        #expect(set.base?.content == .text("a\n"))
        #expect(set.heads.allSatisfy { $0.version.parents == [set.base!.version.id] })
        #expect(try fixture.conflictSet().heads.map(\.version.id) == set.heads.map(\.version.id))
        #expect(Set(set.heads.map(\.version.id)).count == 3)

        // The same versions written into a store give the same set, ids apart.
        let made = try fixture.makeStore()
        let stored = try made.store.conflictSet(of: fixture.key)
        func shape(_ set: ConflictSet) -> [[String]] {
            (set.heads + [set.base!]).map {
                [
                    $0.version.deviceName, ISO8601DateFormatter().string(from: $0.version.modificationDate),
                    "\($0.version.isConflict)", "\($0.version.parents.count)", $0.content?.escaped ?? "deleted",
                ]
            }
                + [set.equivalents.map(\.deviceName)]
        }
        #expect(shape(stored) == shape(set))
    }

    @Test func fixturesNoStoreCouldHoldAreRefused() async throws {
        let base = FixtureVersion("a\n", device: "origin", date: ConflictFixture.date(minute: 0))
        let late = ConflictFixture(
            key: "a.md", base: base, current: FixtureVersion("b\n", device: "phone", date: ConflictFixture.date(minute: 1)),
            conflicts: [FixtureVersion("c\n", device: "laptop", date: ConflictFixture.date(minute: 1))])
        #expect(throws: FixtureError.currentIsNotLatest(current: ConflictFixture.date(minute: 1), conflict: ConflictFixture.date(minute: 1))) {
            try late.conflictSet()
        }
        let same = ConflictFixture(
            key: "a.md", base: base, current: FixtureVersion("b\n", device: "phone", date: ConflictFixture.date(minute: 2)),
            conflicts: [FixtureVersion("b\n", device: "laptop", date: ConflictFixture.date(minute: 1))])
        #expect(throws: TruceError.notInConflict("a.md")) { try same.conflictSet() }
        let orphanDeletion = ConflictFixture(
            key: "a.md", base: nil, current: FixtureVersion("b\n", device: "phone", date: ConflictFixture.date(minute: 2)),
            conflicts: [.deletion(device: "laptop", date: ConflictFixture.date(minute: 1))])
        #expect(throws: FixtureError.deletionWithoutDocument) { try orphanDeletion.makeStore() }
        let badDevice = ConflictFixture(
            key: "a.md", base: base, current: FixtureVersion("b\n", device: "ph<one>", date: ConflictFixture.date(minute: 2)),
            conflicts: [FixtureVersion("c\n", device: "laptop", date: ConflictFixture.date(minute: 1))])
        #expect(throws: TruceError.invalidDeviceName("ph<one>", reason: "git forbids '<' and '>' in author names")) { try badDevice.conflictSet() }
    }

    @Test func aDeleteConflictGivesTheResolverWhatThePolicyLeaves() async throws {
        let base = FixtureVersion("a\nb\nc\n", device: "origin", date: ConflictFixture.date(minute: 0))
        let one = ConflictFixture(
            key: "a.md", base: base, current: FixtureVersion("A\nb\nc\n", device: "phone", date: ConflictFixture.date(minute: 2)),
            conflicts: [.deletion(device: "laptop", date: ConflictFixture.date(minute: 1))])
        await #expect(throws: FixtureError.settledByPolicy(.modifyWins)) { try await one.resolve(with: ThreeWayMerge()) }
        #expect(throws: FixtureError.settledByPolicy(.deleteWins)) { try one.contestedConflictSet(deleteConflict: .deleteWins) }

        let two = ConflictFixture(
            key: "a.md", base: base, current: FixtureVersion("A\nb\nc\n", device: "phone", date: ConflictFixture.date(minute: 3)),
            conflicts: [
                .deletion(device: "laptop", date: ConflictFixture.date(minute: 2)),
                FixtureVersion("a\nb\nC\n", device: "watch", date: ConflictFixture.date(minute: 1)),
            ])
        #expect(try two.conflictSet().heads.count == 3)
        let contested = try two.contestedConflictSet()
        #expect(contested.heads.map(\.version.deviceName) == ["phone", "watch"])
        #expect(try await two.resolve(with: ThreeWayMerge()).resolvedContent == .text("A\nb\nC\n"))
        let made = try two.makeStore()
        #expect(try made.store.contestedConflictSet(of: two.key).heads.map(\.version.deviceName) == ["phone", "watch"])
    }

    // MARK: built-in resolvers through their modules

    @Test func threeWayMergeMergesApartEditsAndAsksAPersonForOverlappingOnes() async throws {
        let base = FixtureVersion("one\ntwo\nthree\n", device: "origin", date: ConflictFixture.date(minute: 0))
        let apart = ConflictFixture(
            key: "notes.md", base: base,
            current: FixtureVersion("ONE\ntwo\nthree\n", device: "phone", date: ConflictFixture.date(minute: 2)),
            conflicts: [FixtureVersion("one\ntwo\nTHREE\n", device: "laptop", date: ConflictFixture.date(minute: 1))])
        #expect(try await apart.resolve(with: ThreeWayMerge()).resolvedContent == .text("ONE\ntwo\nTHREE\n"))

        let overlapping = ConflictFixture(
            key: "notes.md", base: base,
            current: FixtureVersion("one\n2\nthree\n", device: "phone", date: ConflictFixture.date(minute: 2)),
            conflicts: [FixtureVersion("one\nzwei\nthree\n", device: "laptop", date: ConflictFixture.date(minute: 1))])
        let points = try #require(try await overlapping.resolve(with: ThreeWayMerge()).conflictPoints)
        #expect(points.count == 1)
        #expect(points.first?.sides.map(\.deviceName) == ["phone", "laptop"])

        let unrelated = ConflictFixture(
            key: "notes.md", base: nil, current: FixtureVersion("x\n", device: "phone", date: ConflictFixture.date(minute: 2)),
            conflicts: [FixtureVersion("y\n", device: "laptop", date: ConflictFixture.date(minute: 1))])
        #expect(try await unrelated.resolve(with: ThreeWayMerge()).passReason != nil, "no base: three-way passes")
    }

    @Test func lastWriterWinsKeepsTheCurrentVersionOrMergesByKey() async throws {
        let fixture = ConflictFixture(
            key: "settings.json",
            base: FixtureVersion(#"{"font": 12, "theme": "light"}"#, device: "origin", date: ConflictFixture.date(minute: 0)),
            current: FixtureVersion(#"{"font": 12, "theme": "dark"}"#, device: "phone", date: ConflictFixture.date(minute: 2)),
            conflicts: [FixtureVersion(#"{"font": 14, "theme": "light"}"#, device: "laptop", date: ConflictFixture.date(minute: 1))])
        #expect(try await fixture.resolve(with: LastWriterWins()).keptVersion == fixture.conflictSet().current.version.id)
        let merged = try #require(try await fixture.resolve(with: LastWriterWins(), options: ["granularity": "key"]).resolvedContent)
        let object = try #require(try JSONSerialization.jsonObject(with: merged) as? [String: Any])
        #expect(object["font"] as? Int == 14 && object["theme"] as? String == "dark", "\(merged.escaped)")
    }

    // MARK: fabricated stores on disk

    @Test func aFabricatedStoreIsTheSameOnEveryRunAndFsckClean() async throws {
        let first = try Self.shopping.makeStore(), second = try Self.shopping.makeStore()
        #expect(first.path != second.path)
        #expect(first.base?.id == second.base?.id)
        #expect(first.versions.heads.map(\.id) == second.versions.heads.map(\.id))
        #expect(first.current.deviceName == "phone" && first.conflicts.map(\.deviceName) == ["laptop"])
        #expect(try first.store.state(of: Self.shopping.key) == .inConflict)
        for made in [first, second] {
            let fsck = try TestSupport.git("-C", made.path, "fsck", "--strict")
            #expect(fsck.status == 0, "\(fsck.errorOutput)")
            let log = try TestSupport.git("-C", made.path, "log", "--format=%an %aI %cI", made.current.id.hex)
            #expect(
                log.output
                    == "phone 2026-11-30T09:10:00+00:00 2026-11-30T09:10:00+00:00\nlaptop 2026-11-30T09:00:00+00:00 2026-11-30T09:00:00+00:00\n")
        }
        // Not only equal within this run: the same on every run and machine.
        #expect(first.base?.id.hex == "5c437acedf1e29b6ef619b8d11c5508e0683bcd4")
        #expect(first.versions.heads.map(\.id.hex) == ["9d790e9d3955a73e8c3ad7327ec2eac94447d44c", "ca4edb8d26a3f8b56a4196e67b1ec0700efd2e5a"])
        // Without a base, each head is a root of its own, synced in.
        let unrelated = ConflictFixture(
            key: "a.md", base: nil, current: FixtureVersion("x\n", device: "phone", date: ConflictFixture.date(minute: 2)),
            conflicts: [FixtureVersion("y\n", device: "laptop", date: ConflictFixture.date(minute: 1))])
        let apart = try unrelated.makeStore(), again = try unrelated.makeStore()
        #expect(apart.base == nil && apart.versions.base == nil && apart.conflicts.count == 1)
        #expect(apart.versions.heads.map(\.id) == again.versions.heads.map(\.id))
        #expect(try TestSupport.git("-C", apart.path, "fsck", "--strict").status == 0)
    }

    @Test func aFabricatedStoreResolvesThroughRoutingAndIsRemovedWithItsValue() async throws {
        var made: FabricatedStore? = try Self.shopping.makeStore()
        let path = try #require(made?.path)
        let store = try #require(made?.store)
        try store.route("*.todo", to: "todo-list", options: ["checked": "last"], device: "laptop")
        var registry = ResolverRegistry([ThreeWayMerge()])
        registry.register(TodoListMerge())
        guard case .resolved(let version, "todo-list", .settled) = try await store.resolve(Self.shopping.key, registry: registry, device: "laptop")
        else {
            Issue.record("the routed resolver did not settle the fabricated conflict")
            return
        }
        #expect(try store.contents(of: version) == .text("- [ ] eggs\n- [ ] bread\n- [x] milk\n"))
        #expect(version.parents == made?.versions.allHeads.map(\.id))
        #expect(try TestSupport.git("-C", path, "fsck", "--strict").status == 0)
        made = nil
        #expect(!FileManager.default.fileExists(atPath: path), "the temporary store goes with its value")
    }

    @Test func aFixtureWrittenIntoAStoreOfTheCallersIsTheOneMakeStoreWrites() async throws {
        let made = try Self.shopping.makeStore()
        // A store set up first, as a test of routing would: the fixture adds its versions and leaves the rest.
        let directory = TemporaryDirectory("truce-written")
        let store = try DocumentStore.create(at: directory.file("store"), resolvers: ResolverRegistry())
        try store.route("*.todo", to: "todo-list", device: "laptop")
        let before = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        let written = try Self.shopping.write(into: store)
        #expect(written.base?.id == made.base?.id, "the same commits as makeStore's")
        #expect(written.current.id == made.current.id && written.conflicts.map(\.id) == made.conflicts.map(\.id))
        #expect(written.current.deviceName == "phone" && written.conflicts.map(\.deviceName) == ["laptop"])
        #expect(try store.versions(of: Self.shopping.key).heads.map(\.id) == [written.current.id] + written.conflicts.map(\.id))
        let routing = try #require(try store.contents(of: ".truce/attributes"))
        #expect(String(decoding: routing, as: UTF8.self).contains("*.todo merge=todo-list"), "the caller's routing stays")

        // Conflicts in the fixture's order, not the store's; a second fixture in the same store; a document the store held.
        let three = ConflictFixture(
            key: "notes.md", base: FixtureVersion("a\n", device: "origin", date: ConflictFixture.date(minute: 0)),
            current: FixtureVersion("d\n", device: "phone", date: ConflictFixture.date(minute: 3)),
            conflicts: [
                FixtureVersion("b\n", device: "laptop", date: ConflictFixture.date(minute: 1)),
                .deletion(device: "watch", date: ConflictFixture.date(minute: 2)),
            ])
        let earlier = try store.save(.text("zero\n"), to: "notes.md", device: "desk", date: ConflictFixture.date(minute: -5))
        let versions = try three.write(into: store)
        #expect(versions.conflicts.map(\.deviceName) == ["laptop", "watch"] && versions.conflicts[1].isDeletion)
        #expect(versions.base?.parents == [earlier.id], "the base is saved on the version the store held")
        #expect(try store.state(of: "notes.md") == .inConflict && store.state(of: Self.shopping.key) == .inConflict)
        #expect(try TestSupport.git("-C", store.path, "fsck", "--strict").status == 0)

        // Without a base, the heads are unrelated histories, synced in from stores made and removed elsewhere.
        let unrelated = ConflictFixture(
            key: "a.md", base: nil, current: FixtureVersion("x\n", device: "phone", date: ConflictFixture.date(minute: 2)),
            conflicts: [FixtureVersion("y\n", device: "laptop", date: ConflictFixture.date(minute: 1))])
        let roots = try unrelated.write(into: store)
        #expect(roots.base == nil && roots.current.parents.isEmpty && roots.conflicts.map(\.parents) == [[]])
        #expect(try store.versions(of: "a.md").heads.map(\.id) == [roots.current.id, roots.conflicts[0].id])
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == before, "nothing made beside the store")
    }

    /// A resolver that settles by going back: the oldest version its context's history reaches, with its bytes.
    struct BackToTheOldest: Resolver {
        let name = "back-to-the-oldest"
        func resolve(_ conflict: ConflictSet, context: ResolutionContext) async throws -> ResolutionOutcome {
            guard let oldest = try await context.history(limit: 100).last else { return .pass(reason: "no history") }
            return .resolved(content: try await context.content(of: oldest))
        }
    }

    @Test func aFixturesContextGivesItsVersionsAsTheHistory() async throws {
        let conflict = try Self.shopping.conflictSet()
        let context = try Self.shopping.context(options: ["checked": "last"], resolverName: "todo-list")
        #expect(context.options["checked"] == "last")
        let history = try await context.history(limit: 10)
        // Newest first: the current version, the conflict version, their base.
        #expect(history.map(\.id) == [conflict.current.version.id, conflict.conflicts[0].version.id, try #require(conflict.base).version.id])
        #expect(try await context.history(limit: 1).map(\.id) == [conflict.current.version.id])
        #expect(try await context.content(of: history[2]) == .text("- [ ] milk\n- [ ] eggs\n"))
        #expect(context.deadline > .now)
        let outcome = try await Self.shopping.resolve(with: BackToTheOldest())
        #expect(outcome.resolvedContent == .text("- [ ] milk\n- [ ] eggs\n"))
        // The checked-last rule through the context a test built, the resolver called directly.
        let direct = try await TodoListMerge().resolve(conflict, context: context)
        #expect(direct.resolvedContent == .text("- [ ] eggs\n- [ ] bread\n- [x] milk\n"))
    }
}
