import Foundation
import TestSupport
import Testing
import Truce

@Suite(.timeLimit(.minutes(10))) struct ThreeWayMergeTests {
    static let base = "# Notes\n\none\ntwo\nthree\nfour\nfive\nsix\nseven\n"

    /// What `git merge-file -p` prints for current/base/other.
    static func gitMergeFile(current: Data, base: Data, other: Data, style: String? = nil) throws -> (Data, Int32) {
        let directory = TemporaryDirectory()
        let paths = [directory.write(current, to: "current"), directory.write(base, to: "base"), directory.write(other, to: "other")]
        let result = try git(["merge-file", "-p"] + (style.map { ["--\($0)"] } ?? []) + paths)
        return (result.stdout, result.status)
    }

    @Test func editsInDifferentPartsMergeAsGitMergeFileDoes() async throws {
        let test = try TestStore()
        try test.setAttributes("*.md merge=three-way\n")
        let laptop = Self.base.replacingOccurrences(of: "two\n", with: "TWO\n")
        let phone = Self.base.replacingOccurrences(of: "six\n", with: "SIX\n")
        let made = try test.makeConflict("notes/a.md", base: .text(Self.base), heads: [("laptop", .text(laptop)), ("phone", .text(phone))])

        let result = try await test.store.resolve("notes/a.md", registry: .standard, device: "laptop")
        guard case .resolved(let version, "three-way", .settled) = result else {
            Issue.record("\(result)")
            return
        }
        let (expected, status) = try Self.gitMergeFile(current: .text(phone), base: .text(Self.base), other: .text(laptop))
        #expect(status == 0)
        #expect(try test.store.contents(of: version) == expected)
        #expect(version.parents == [made.current.id, made.heads[0].id])
        #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)
    }

    @Test func overlappingEditsNeedAPersonAndWriteNothing() async throws {
        let test = try TestStore()
        try test.setAttributes("*.md merge=three-way\n")
        try test.makeConflict(
            "a.md", base: .text(Self.base),
            heads: [
                ("laptop", .text(Self.base.replacingOccurrences(of: "three\n", with: "laptop three\n"))),
                ("phone", .text(Self.base.replacingOccurrences(of: "three\n", with: "phone three\n"))),
            ])
        let before = snapshot(ofStore: test.path)
        let result = try await test.store.resolve("a.md", registry: .standard, device: "laptop")
        guard case .needsPerson(let points, "three-way", _) = result else {
            Issue.record("\(result)")
            return
        }
        #expect(points.count == 1)
        #expect(points[0].baseLines == ConflictPoint.LineRange(start: 5, count: 1))
        #expect(points[0].base == .text("three\n"))
        #expect(points[0].sides.map(\.text) == [.text("phone three\n"), .text("laptop three\n")])
        #expect(snapshot(ofStore: test.path) == before)
    }

    @Test func threeHeadsFoldCleanlyInHeadOrder() async throws {
        let test = try TestStore()
        let edits = [("laptop", "one\n", "ONE\n"), ("phone", "four\n", "FOUR\n"), ("tablet", "seven\n", "SEVEN\n")]
        try test.makeConflict(
            "a.md", base: .text(Self.base), heads: edits.map { ($0.0, .text(Self.base.replacingOccurrences(of: $0.1, with: $0.2))) })
        let result = try await test.store.resolve("a.md", registry: .standard, device: "laptop")
        guard case .resolved(let version, "three-way", _) = result else {
            Issue.record("\(result)")
            return
        }
        #expect(try test.store.contents(of: version) == .text("# Notes\n\nONE\ntwo\nthree\nFOUR\nfive\nsix\nSEVEN\n"))
        #expect(version.parents.count == 3)
    }

    @Test func binaryContentPassesToTheFallback() async throws {
        let test = try TestStore()
        try test.setAttributes("*.bin merge=three-way\n")
        try test.setConfig("resolver.three-way.fallback", "overwrite-with-current")
        try test.makeConflict("a.bin", base: Data([0, 1]), heads: [("laptop", Data([0, 2])), ("phone", Data([0, 3]))])
        let result = try await test.store.resolve("a.bin", registry: .standard, device: "laptop")
        guard case .resolved(let version, "overwrite-with-current", _) = result else {
            Issue.record("\(result)")
            return
        }
        #expect(try test.store.contents(of: version) == Data([0, 3]))
    }

    @Test func withoutAFallbackBinaryContentNeedsAPersonWithOneWholeDocumentPoint() async throws {
        let test = try TestStore()
        try test.makeConflict("a.bin", base: Data([0, 1]), heads: [("laptop", Data([0, 2])), ("phone", Data([0, 3]))])
        let result = try await test.store.resolve("a.bin", registry: .standard, device: "laptop")
        guard case .needsPerson(let points, _, let reasons) = result else {
            Issue.record("\(result)")
            return
        }
        #expect(points.count == 1 && points[0].isWholeDocument)
        #expect(reasons == ["three-way: binary content"])
    }

    @Test(arguments: ["merge", "diff3", "zdiff3"])
    func theConfiguredStyleIsAccepted(style: String) async throws {
        let test = try TestStore()
        try test.setConfig("resolver.three-way.style", style)
        try test.makeConflict("a.md", base: .text("a\n"), heads: [("laptop", .text("a\nb\n")), ("phone", .text("c\na\n"))])
        let choice = try test.store.resolverChoice(for: "a.md", registry: .standard)
        #expect(choice.options["three-way"]?["style"] == style)
        guard case .resolved = try await test.store.resolve("a.md", registry: .standard, device: "x") else {
            Issue.record("not resolved")
            return
        }
    }

    @Test(arguments: [
        ("style", "fancy", "expected one of merge, diff3, zdiff3"), ("markerSize", "0", "from 1 to 1024"),
        ("diffAlgorithm", "histogram", "expected one of myers, minimal, patience"),
    ])
    func badOptionsAreConfigErrorsThatChangeNothing(option: String, value: String, message: String) async throws {
        let test = try TestStore()
        try test.makeConflict("a.md", base: .text("a\n"), heads: [("laptop", .text("a\nb\n")), ("phone", .text("c\na\n"))])
        try test.setConfig("resolver.three-way.\(option)", value)
        let before = snapshot(ofStore: test.path)
        await #expect {
            try await test.store.resolve("a.md", registry: .standard, device: "x")
        } throws: { error in
            guard case .invalidConfiguration(let text) = error as? TruceError else { return false }
            return text.contains(message)
        }
        #expect(snapshot(ofStore: test.path) == before)
    }
}
