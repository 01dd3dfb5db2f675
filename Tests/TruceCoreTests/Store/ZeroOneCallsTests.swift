import Foundation
import TestSupport
import Testing
import Truce

/// Calls written against 0.1.0 reach their deprecated forms, from synchronous and `async` code alike, and do what they
/// did; the fixture package `Tests/Fixtures/Adopter` is the whole of such an app. The deprecation warnings here are the
/// point.
@Suite(.timeLimit(.minutes(10))) struct ZeroOneCallsTests {
    /// `key` in conflict: the base, the laptop's line and the phone's, from one base.
    static func conflict(_ key: DocumentKey = "notes/plan.md", in store: DocumentStore) throws {
        let base = try store.save(.text("# Plan\nship on Monday\n"), to: key, device: "laptop")
        try store.save(.text("# Plan\nship on Tuesday\n"), to: key, device: "laptop", base: base.id)
        try store.save(.text("# Plan\nship on Friday\n"), to: key, device: "phone", base: base.id)
    }

    @Test func theSynchronousFormsAreReachedFromAsyncCodeWithoutAwait() async throws {
        let test = try TestStore()
        try Self.conflict(in: test.store)
        // 0.1.0 had these synchronous only: in an async function Swift picked them then, and must still.
        let points = try test.store.conflictPoints(of: "notes/plan.md")
        #expect(points.map(\.id) == ["H1"])
        let answered = try test.store.resolve("notes/plan.md", answers: ["H1": .base], device: "person")
        #expect(answered.version?.resolvedBy == DocumentStore.personResolverName)
        #expect(try test.store.contents(of: "notes/plan.md" as DocumentKey) == .text("# Plan\nship on Monday\n"))

        try Self.conflict("notes/other.md", in: test.store)
        let whole = try test.store.resolve("notes/other.md", content: .text("by hand\n"), device: "person")
        #expect(whole.version?.resolvedBy == DocumentStore.personResolverName)

        let out = test.directory.file("out")
        let exported = try test.store.exportDocuments(to: out)
        #expect(exported.written == 2)
        let other = try TestStore()
        let imported = try other.store.importDocuments(from: .folder(at: out), device: "tablet")
        #expect(imported.newVersions == 2)
    }

    @Test func theAsyncFormsThatTookARegistryStillDo() async throws {
        let test = try TestStore()
        try test.store.route("*.json", to: "structured")
        let base = try test.store.save(.text(#"{"theme": "light", "size": 12}"#), to: "editor.json", device: "laptop")
        try test.store.save(.text(#"{"theme": "dark", "size": 12}"#), to: "editor.json", device: "laptop", base: base.id)
        try test.store.save(.text(#"{"theme": "sepia", "size": 14}"#), to: "editor.json", device: "phone", base: base.id)
        let points = try await test.store.conflictPoints(of: "editor.json", registry: .standard)
        #expect(points.map(\.path) == ["/theme"])
        let result = try await test.store.resolve("editor.json", answers: ["/theme": .base], registry: .standard, device: "person")
        let resolution = try #require(result.version)
        let merged = try #require(try test.store.contents(of: resolution))
        #expect(String(decoding: merged, as: UTF8.self).contains(#""theme": "light""#))
        #expect(String(decoding: merged, as: UTF8.self).contains(#""size": 14"#))
    }

    /// A function that returned `save`'s `Version` compiles and gets it; a `let` takes the `SaveResult`.
    func written(_ text: String, to key: DocumentKey, in store: DocumentStore) throws -> Version {
        try store.save(.text(text), to: key, device: "laptop")
    }

    @Test func aSaveIsAVersionWhereAVersionIsExpected() throws {
        let test = try TestStore()
        let version = try written("one\n", to: "a.txt", in: test.store)
        #expect(try test.store.currentVersion(of: "a.txt") == version)
        let result = try test.store.save(.text("two\n"), to: "a.txt", device: "laptop")
        #expect(type(of: result) == SaveResult.self)
        #expect(result.state == .settled)
        let deletion: Version = try test.store.delete("a.txt", device: "laptop")
        #expect(deletion.isDeletion)
        #expect(deletion.parents == [result.id])
    }

    @Test func aSyncThatResolvedWithARegistryStillDoes() async throws {
        let directory = TemporaryDirectory("truce-zero-one")
        #expect(try git(["init", "-q", "--bare", directory.file("hub")]).status == 0)
        let laptop = try TestStore(), phone = try TestStore()
        let base = try laptop.store.save(.text("a\nb\nc\n"), to: "n.md", device: "laptop")
        _ = try await laptop.store.sync(with: directory.file("hub"))
        _ = try await phone.store.sync(with: directory.file("hub"))
        try laptop.store.save(.text("A\nb\nc\n"), to: "n.md", device: "laptop", base: base.id)
        try phone.store.save(.text("a\nb\nC\n"), to: "n.md", device: "phone", base: base.id)
        _ = try await laptop.store.sync(with: directory.file("hub"))
        let report = try await phone.store.sync(with: directory.file("hub"), resolving: .standard, device: "phone")
        #expect(report.resolved == ["n.md"])
        #expect(try phone.store.contents(of: "n.md" as DocumentKey) == .text("A\nb\nC\n"))
        // What the deprecation message says to write instead compiles and does the same.
        let again = try await laptop.store.sync(with: directory.file("hub"), resolving: true, registry: .standard, device: "laptop")
        #expect(again.inConflict.isEmpty)
    }

    /// A store opened with the standard resolvers, routing to an app's resolver, after a call dropped its `registry:`.
    @Test func anUnknownResolverErrorNamesTheFix() async throws {
        let test = try TestStore()
        try test.store.route("*.todo", to: "todo-list")
        try Self.conflict("shop.todo", in: test.store)
        let error = await #expect(throws: TruceError.self) { try await test.store.resolve("shop.todo") }
        guard case .unknownResolver(let name, _) = error else {
            Issue.record("not an unknown resolver: \(String(describing: error))")
            return
        }
        #expect(name == "todo-list")
        #expect(
            error?.localizedDescription.contains(
                "register it in the resolvers the store is opened with (resolvers:) or the call is given (registry:)") == true)
    }
}
