import Foundation
import TestSupport
import Testing
import Truce

/// Plain git reads a store, and clones it, without a word on stderr: a store's config holds no deprecated setting,
/// and a store made before with `core.fsyncObjectFiles` is upgraded once, when Truce opens it.
@Suite(.timeLimit(.minutes(10))) struct PlainGitOnAStoreTests {
    /// A store with history: saves, a conflict and its resolution, a deletion.
    static func populated() async throws -> TestStore {
        let test = try TestStore()
        try test.store.save(.text("one\n"), to: "notes/a.txt", device: "laptop")
        try test.store.save(.text("two\n"), to: "notes/a.txt", device: "laptop")
        try test.store.save(.text("gone soon\n"), to: "b.txt", device: "phone")
        try test.store.delete("b.txt", device: "phone")
        try test.makeConflict("c.md", base: .text("a\nb\nc\n"), heads: [("laptop", .text("A\nb\nc\n")), ("phone", .text("a\nb\nC\n"))])
        _ = try await test.store.resolve("c.md", using: OverwriteWithCurrent(), device: "laptop")
        return test
    }

    /// Every git command the issue names, on the store at `path`: for each one that failed or printed anything on
    /// stderr, a line saying what. A mirror clone copies a store's refs (a plain clone would copy only branches, of
    /// which a store has none); it goes through `file://`, so that git runs upload-pack in the store, whose messages
    /// would come back as `remote: …` lines (`--quiet` drops only the clone's own progress, not those).
    static func complaints(ofGitOn path: String) throws -> [String] {
        let clones = TemporaryDirectory("truce-clone")
        let commands: [[String]] = [
            ["-C", path, "log", "--all", "--format=%h %s"],
            ["-C", path, "log", "refs/truce/journal", "--format=%h %s"],
            ["-C", path, "fsck", "--strict"],
            ["-C", path, "count-objects", "-v"],
            ["-C", path, "gc"],
            ["-C", path, "fsck", "--strict"],
            ["clone", "--quiet", "--mirror", "file://" + path, clones.file("mirror")],
            ["clone", "--quiet", "--mirror", "--no-local", path, clones.file("no-local")],
            ["-C", clones.file("mirror"), "fsck", "--strict"],
        ]
        var complaints: [String] = []
        for arguments in commands {
            let result = try git(arguments)
            // git's notice for every repository without branches (a store keeps its refs under refs/truce/): not a
            // warning, and not about the store's config. Anything else on stderr is a complaint.
            let lines = result.errorLines.filter { $0 != "notice: HEAD points to an unborn branch (master)" }
            if result.status != 0 || !lines.isEmpty {
                complaints.append("git \(arguments.joined(separator: " ")): exit \(result.status): \(lines)")
            }
        }
        // The clones hold what the store holds.
        let original = try git(["-C", path, "for-each-ref", "--format=%(objectname) %(refname)"]).output
        let mirrored = try git(["-C", clones.file("mirror"), "for-each-ref", "--format=%(objectname) %(refname)"]).output
        if original != mirrored || original.isEmpty { complaints.append("the mirror's refs differ:\n\(original)\n\(mirrored)") }
        return complaints
    }

    @Test func gitReadsGcsAndClonesAFreshStoreWithoutAWord() async throws {
        let test = try await Self.populated()
        #expect(try Self.complaints(ofGitOn: test.path) == [])
    }

    @Test func aStoreMadeWithTheDeprecatedSettingIsUpgradedOnceWhenOpened() async throws {
        let test = try await Self.populated()
        // The config a store made before this change has: the deprecated line, none of its replacements.
        try test.unsetFsyncConfig()
        _ = try test.git("config", "core.fsyncObjectFiles", "true")
        let noisy = try Self.complaints(ofGitOn: test.path)
        #expect(noisy.contains { $0.contains("core.fsyncObjectFiles is deprecated") }, "the old config must be what git warns about: \(noisy)")
        #expect(noisy.contains { $0.contains("remote: warning: core.fsyncObjectFiles is deprecated") }, "\(noisy)")

        let reopened = try DocumentStore.open(at: test.path)
        #expect(try test.git("config", "core.fsync") == "all\n")
        #expect(try test.git("config", "core.fsyncMethod") == "fsync\n")
        #expect(try git(["-C", test.path, "config", "--get-all", "core.fsyncObjectFiles"]).output == "")
        #expect(try reopened.contents(of: "notes/a.txt") == .text("two\n"))
        #expect(try Self.complaints(ofGitOn: test.path) == [])

        // Once: an upgraded store's config is not written again at the next opens.
        let config = test.path + "/config"
        let before = try FileManager.default.attributesOfItem(atPath: config)
        let bytes = FileManager.default.contents(atPath: config)
        for _ in 0..<3 { _ = try DocumentStore.open(at: test.path) }
        let after = try FileManager.default.attributesOfItem(atPath: config)
        #expect(FileManager.default.contents(atPath: config) == bytes)
        #expect(after[.systemFileNumber] as? Int == before[.systemFileNumber] as? Int, "the config was rewritten (a new inode)")
        #expect(after[.modificationDate] as? Date == before[.modificationDate] as? Date)
    }

    @Test func aStoreThatTurnedTheOldSettingOffLosesItAndGainsNothing() throws {
        let test = try TestStore()
        try test.unsetFsyncConfig()
        _ = try test.git("config", "core.fsyncObjectFiles", "false")
        _ = try DocumentStore.open(at: test.path)
        for name in ["core.fsyncObjectFiles", "core.fsync", "core.fsyncMethod"] {
            #expect(try git(["-C", test.path, "config", "--get-all", name]).output == "", "\(name)")
        }
    }
}
