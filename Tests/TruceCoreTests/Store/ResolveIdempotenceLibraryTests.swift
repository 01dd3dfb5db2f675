import Foundation
import TestSupport
import Testing
import Truce

/// `DocumentStore.resolve` on a document in no conflict: the library side of `truce resolve DOC`'s idempotence.
@Suite(.timeLimit(.minutes(10))) struct ResolveIdempotenceLibraryTests {
    @Test func aSettledDocumentIsNothingToResolveThroughEveryAutomaticForm() async throws {
        let test = try TestStore()
        let saved = try test.store.save(.text("x\n"), to: "a.txt", device: "laptop")
        let before = snapshot(ofStore: test.path)
        let results = [
            try await test.store.resolve("a.txt", registry: .standard),
            try await test.store.resolve("a.txt", registry: .standard, dryRun: true),
            try await test.store.resolve("a.txt", using: OverwriteWithCurrent()),
        ]
        for result in results {
            guard case .nothingToResolve(let version) = result else {
                Issue.record("expected nothing to resolve, got \(result)")
                continue
            }
            #expect(version.id == saved.id)
            #expect(result.version == nil, "nothing was written")
        }
        #expect(snapshot(ofStore: test.path) == before)
        await #expect(throws: TruceError.documentNotFound("b.txt")) { try await test.store.resolve("b.txt", registry: .standard) }
    }

    @Test func identicalHeadsAreMergedIntoOneVersion() async throws {
        let test = try TestStore()
        let made = try test.makeConflict("a.txt", base: .text("base\n"), heads: [("laptop", .text("same\n")), ("phone", .text("same\n"))])
        #expect(try test.store.state(of: "a.txt") == .settled)
        let dryRun = try await test.store.resolve("a.txt", registry: .standard, dryRun: true)
        guard case .wouldResolve(.text("same\n"), DocumentStore.identicalContentResolverName) = dryRun else {
            Issue.record("dry run: \(dryRun)")
            return
        }
        let result = try await test.store.resolve("a.txt", registry: .standard, device: "desk")
        guard case .resolved(let version, DocumentStore.identicalContentResolverName, .settled) = result else {
            Issue.record("expected a resolution of the identical heads, got \(result)")
            return
        }
        #expect(version.parents == [made.heads[1].id, made.heads[0].id])
        #expect(try test.store.versions(of: "a.txt").equivalents.isEmpty)
        #expect(try test.store.contents(of: "a.txt") == .text("same\n"))
        guard case .nothingToResolve(version) = try await test.store.resolve("a.txt", registry: .standard) else {
            Issue.record("a second resolve must find nothing to resolve")
            return
        }
    }
}
