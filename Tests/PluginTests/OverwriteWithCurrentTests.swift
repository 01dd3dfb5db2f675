import Foundation
import TestSupport
import Testing
import Truce

@Suite(.timeLimit(.minutes(10))) struct OverwriteWithCurrentTests {
    @Test func keepsTheCurrentTreeAndResolvesEveryOtherHead() async throws {
        let test = try TestStore()
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0, 0, 0, 1])
        let made = try test.makeConflict(
            "images/logo.png", base: png,
            heads: [
                ("laptop", png + Data([1])), ("phone", png + Data([2])), ("tablet", png + Data([3])),
            ])
        try test.setAttributes("*.png merge=overwrite-with-current\n")

        let result = try await test.store.resolve("images/logo.png", registry: .standard, device: "laptop")
        guard case .resolved(let resolution, let resolver, let state) = result else {
            Issue.record("not resolved: \(result)")
            return
        }
        #expect(resolver == "overwrite-with-current")
        #expect(state == .settled)
        #expect(resolution.parents == [made.current.id, made.heads[1].id, made.heads[0].id])
        #expect(try test.store.contents(of: resolution) == png + Data([3]))
        // Same tree as the current version: the shape of `git merge -s ours`.
        #expect(try test.git("rev-parse", "\(resolution.id.hex)^{tree}") == test.git("rev-parse", "\(made.current.id.hex)^{tree}"))

        let trailers = try git("interpret-trailers", "--parse", input: .text(test.git("log", "-1", "--format=%B", resolution.id.hex))).output
        #expect(
            trailers == """
                Document: images/logo.png
                Device: overwrite-with-current
                Resolved-By: overwrite-with-current
                Resolves: \(made.heads[1].id.hex)
                Resolves: \(made.heads[0].id.hex)

                """)
        let versions = try test.store.versions(of: "images/logo.png")
        #expect(versions.heads.map(\.id) == [resolution.id])
        #expect(try test.store.documentsInConflict().isEmpty)
        #expect(try test.git("for-each-ref", "--format=%(objectname)", "refs/truce/heads/") == resolution.id.hex + "\n")
        #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)
        let history = try test.store.history(of: "images/logo.png")
        #expect(history.filter(\.isResolved).map(\.id).sorted() == [made.heads[0].id, made.heads[1].id].sorted())
    }

    @Test func canBeUsedDirectlyFromSwift() async throws {
        let test = try TestStore()
        let made = try test.makeConflict("a.txt", base: .text("0\n"), heads: [("laptop", .text("1\n")), ("phone", .text("2\n"))])
        let result = try await test.store.resolve("a.txt", using: OverwriteWithCurrent(), device: "phone")
        guard case .resolved(let version, _, _) = result else {
            Issue.record("not resolved")
            return
        }
        #expect(version.resolvedBy == "overwrite-with-current")
        #expect(try test.store.contents(of: "a.txt") == .text("2\n"))
        #expect(try test.store.currentVersion(of: "a.txt")?.parents == [made.current.id, made.heads[0].id])
    }
}
