import Foundation
import TestSupport
import Testing
import Truce

@Suite(.timeLimit(.minutes(10))) struct ExternalDriverTests {
    static let base = "one\ntwo\nthree\nfour\nfive\nsix\n"
    static let laptop = base.replacingOccurrences(of: "two\n", with: "TWO\n")
    static let phone = base.replacingOccurrences(of: "five\n", with: "FIVE\n")

    /// A store where `*.md` uses the driver `mine`, running `command`, with a conflict between a laptop and a phone.
    func store(driver command: String, heads: [(String, Data?)]? = nil) throws -> (TestStore, MadeConflict) {
        let test = try TestStore()
        try test.setAttributes("*.md merge=mine\n")
        try test.setConfig("merge.mine.driver", command)
        let made = try test.makeConflict(
            "notes/a.md", base: .text(Self.base),
            heads: heads ?? [("laptop", .text(Self.laptop)), ("phone", .text(Self.phone))])
        return (test, made)
    }

    @Test func gitMergeFileWrappedAsADriverGivesWhatGitMergeFileGives() async throws {
        let (test, made) = try store(driver: "git merge-file -L a -L b -L c %A %O %B")
        let result = try await test.store.resolve("notes/a.md", registry: .standard, device: "laptop")
        guard case .resolved(let version, "mine", .settled) = result else {
            Issue.record("\(result)")
            return
        }
        let directory = TemporaryDirectory()
        let expected = try git(
            "merge-file", "-p", "-L", "a", "-L", "b", "-L", "c", directory.write(.text(Self.phone), to: "current"),
            directory.write(.text(Self.base), to: "base"), directory.write(.text(Self.laptop), to: "other"))
        #expect(expected.status == 0)
        #expect(try test.store.contents(of: version) == expected.stdout)
        #expect(version.resolvedBy == "mine")
        #expect(version.parents == [made.current.id, made.heads[0].id])
        #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)
    }

    @Test func aConflictedExitPassesToTheFallbackAndWritesNothingItself() async throws {
        let laptop = Self.base.replacingOccurrences(of: "three\n", with: "laptop\n")
        let phone = Self.base.replacingOccurrences(of: "three\n", with: "phone\n")
        let (test, _) = try store(driver: "git merge-file -L a -L b -L c %A %O %B", heads: [("laptop", .text(laptop)), ("phone", .text(phone))])
        let before = snapshot(ofStore: test.path)
        let result = try await test.store.resolve("notes/a.md", registry: .standard, device: "x")
        guard case .needsPerson(let points, "mine", let reasons) = result else {
            Issue.record("\(result)")
            return
        }
        #expect(points.count == 1 && points[0].base == .text("three\n"))
        #expect(
            reasons.count == 1 && reasons[0].hasPrefix("mine: merging version ") && reasons[0].hasSuffix("it exited with status 1: conflicts remain"))
        #expect(snapshot(ofStore: test.path) == before)

        try test.setConfig("resolver.mine.fallback", "overwrite-with-current")
        guard case .resolved(let version, "overwrite-with-current", _) = try await test.store.resolve("notes/a.md", registry: .standard, device: "x")
        else {
            Issue.record("the fallback did not run")
            return
        }
        #expect(try test.store.contents(of: version) == .text(phone))
    }

    @Test func aUnionDriverMatchesGitMergeFileUnion() async throws {
        let laptop = Self.base.replacingOccurrences(of: "three\n", with: "laptop\n")
        let phone = Self.base.replacingOccurrences(of: "three\n", with: "phone\n")
        let (test, _) = try store(driver: "git merge-file --union %A %O %B", heads: [("laptop", .text(laptop)), ("phone", .text(phone))])
        guard case .resolved(let version, "mine", _) = try await test.store.resolve("notes/a.md", registry: .standard, device: "x")
        else {
            Issue.record("not resolved")
            return
        }
        let directory = TemporaryDirectory()
        let expected = try git(
            "merge-file", "-p", "--union", directory.write(.text(phone), to: "c"), directory.write(.text(Self.base), to: "b"),
            directory.write(.text(laptop), to: "o")
        ).stdout
        #expect(try test.store.contents(of: version) == expected)
    }

    @Test func threeHeadsFoldPairwiseCurrentFirst() async throws {
        let tablet = Self.base + "seven\n"
        let (test, made) = try store(
            driver: "git merge-file %A %O %B",
            heads: [("laptop", .text(Self.laptop)), ("phone", .text(Self.phone)), ("tablet", .text(tablet))])
        guard case .resolved(let version, "mine", _) = try await test.store.resolve("notes/a.md", registry: .standard, device: "x")
        else {
            Issue.record("not resolved")
            return
        }
        #expect(try test.store.contents(of: version) == .text("one\nTWO\nthree\nfour\nFIVE\nsix\nseven\n"))
        #expect(version.parents == [made.heads[2].id, made.heads[1].id, made.heads[0].id])
    }

    @Test func aShellDriverGetsGitsPlaceholdersAsTemporaryFilesAndFixedValues() async throws {
        let record = TemporaryDirectory()
        let script = record.write(
            .text("pwd > \(record.path)/args\nprintf '%s\\n' \"$@\" >> \(record.path)/args\ncat \"$3\" >> \"$1\"\n"),
            to: "driver.sh")
        let (test, made) = try store(driver: "sh \(script) %A %O %B %L %P %S %X %Y %% %Q")
        try test.setConfig("resolver.mine.markerSize", "9")
        guard case .resolved(let version, "mine", _) = try await test.store.resolve("notes/a.md", registry: .standard, device: "x")
        else {
            Issue.record("not resolved")
            return
        }
        #expect(try test.store.contents(of: version) == .text(Self.phone + Self.laptop))
        let lines = try String(contentsOfFile: record.file("args"), encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(lines.count == 11)
        #expect(lines.first?.hasPrefix(FileManager.default.temporaryDirectory.path + "/truce-driver-") == true)
        #expect(
            Array(lines.dropFirst()) == [
                "current", "base", "other", "9", "document.md", made.base.id.short, made.current.id.short,
                made.heads[0].id.short, "%", "%Q",
            ])
        // The temporary directory goes when the driver is done.
        #expect(!FileManager.default.fileExists(atPath: lines[0]))
    }

    @Test func explicitResolverNameFindsADriverAndRegisteredNamesWin() async throws {
        let marker = TemporaryDirectory()
        let (test, _) = try store(driver: "git merge-file %A %O %B")
        try test.setConfig("merge.union.driver", "touch \(marker.path)/ran")
        try test.setAttributes("*.md merge=union\n")
        let choice = try test.store.resolverChoice(for: "notes/a.md", registry: .standard, explicit: "mine")
        #expect(choice.chain == ["mine"])
        #expect(choice.resolvers["mine"]?.definition == "merge.mine.driver = git merge-file %A %O %B (the store's config)")
        #expect(try test.store.resolverChoice(for: "notes/a.md", registry: .standard).resolvers["union"]?.definition == nil)
        guard case .resolved(_, "union", _) = try await test.store.resolve("notes/a.md", registry: .standard, device: "x")
        else {
            Issue.record("not resolved by union")
            return
        }
        #expect(!FileManager.default.fileExists(atPath: marker.file("ran")))
    }

    @Test(arguments: [
        ("merge.mine.driver", "", "merge.mine.driver is empty"),
        ("resolver.external.timeout", "0", "resolver.external.timeout = 0: expected a number from 0.1 to 86400"),
        ("resolver.mine.timeout", "soon", "resolver.mine.timeout = soon: expected a number from 0.1 to 86400"),
        ("resolver.mine.markerSize", "0", "resolver.mine.markerSize = 0: expected a whole number from 1 to 1024"),
    ])
    func badDriverConfigIsAConfigError(name: String, value: String, message: String) async throws {
        let (test, _) = try store(driver: "git merge-file %A %O %B")
        try test.setConfig(name, value)
        let before = snapshot(ofStore: test.path)
        await #expect {
            try await test.store.resolve("notes/a.md", registry: .standard, device: "x")
        } throws: { error in
            guard case .invalidConfiguration(let text) = error as? TruceError else { return false }
            return text.contains(message)
        }
        #expect(snapshot(ofStore: test.path) == before)
    }

    @Test func aDriverDefinedNowhereIsAnUnknownResolver() async throws {
        let test = try TestStore()
        try test.setAttributes("*.md merge=ghost\n")
        try test.makeConflict("a.md", base: .text("a\n"), heads: [("laptop", .text("b\n")), ("phone", .text("c\n"))])
        await #expect(throws: TruceError.unknownResolver("ghost", source: "info/attributes line 1: *.md merge=ghost")) {
            try await test.store.resolve("a.md", registry: .standard, device: "x")
        }
    }
}
