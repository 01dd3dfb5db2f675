import Foundation
import TestSupport
import Testing

@testable import TruceGit

/// Loose reference files and their reflogs as Truce writes them without libgit2 (`LooseReferenceFiles.swift`), against
/// `git update-ref` on the same repository: the same bytes for the same update, read back by git, and git's lock and
/// compare-and-swap kept both ways.
@Suite(.timeLimit(.minutes(10))) struct LooseReferenceFilesTests {
    /// A bare repository made by libgit2 that logs every reference update, with an identity in its own config, so that
    /// git and Truce sign reflog lines alike; commits to point references at.
    final class Fixture {
        static let name = "Truce Tester", email = "tester@truce.example"
        let directory = TemporaryDirectory("truce-loose-refs")
        var path: String { directory.file("repo.git") }
        let repository: Repository

        init() throws {
            let path = directory.file("repo.git")
            _ = try Repository.createBare(at: path)
            for (key, value) in [("core.logAllRefUpdates", "always"), ("user.name", Self.name), ("user.email", Self.email)] {
                try #require(try Self.git(["config", key, value], in: path).status == 0)
            }
            // Opened after the config is written: a handle reads `core.logAllRefUpdates` once.
            repository = try Repository.openBare(at: path)
        }

        func git(_ arguments: [String], environment: [String: String] = [:]) throws -> ProcessResult {
            try Self.git(arguments, in: path, environment: environment)
        }

        /// The real git on the repository at `path`, with no system or user config and the config's identity as
        /// committer (git would take a `GIT_COMMITTER_*` of the environment over the config; libgit2 reads the config).
        static func git(_ arguments: [String], in path: String, environment: [String: String] = [:]) throws -> ProcessResult {
            let identity = [
                "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email,
                "GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email,
            ]
            return try run("/usr/bin/env", ["git", "-C", path] + arguments, environment: identity.merging(environment) { $1 })
        }

        /// `git` that must succeed; its output without the last newline.
        @discardableResult
        func gitOutput(_ arguments: [String], environment: [String: String] = [:]) throws -> String {
            let result = try git(arguments, environment: environment)
            try #require(result.status == 0, "git \(arguments.joined(separator: " ")): \(result.errorOutput)")
            return result.output.hasSuffix("\n") ? String(result.output.dropLast()) : result.output
        }

        /// A new root commit with `message`, of a fixed date.
        func commit(_ message: String) throws -> ObjectID {
            let tree = try gitOutput(["mktree"])
            let date = ["GIT_AUTHOR_DATE": "1764582000 +0100", "GIT_COMMITTER_DATE": "1764582000 +0100"]
            return try #require(ObjectID(hex: try gitOutput(["commit-tree", tree, "-m", message], environment: date)))
        }

        /// The bytes of the file at `relative` in the git directory, nil when there is none.
        func bytes(_ relative: String) -> [UInt8]? {
            FileManager.default.contents(atPath: path + "/" + relative).map { Array($0) }
        }

        /// The reflog of `name`, a line each, with each line's time (the seconds of its committer) made `<time>`:
        /// git and Truce each sign with the time of their own write. The zone stays.
        func reflogWithoutTimes(of name: String) throws -> [String] {
            let log = try #require(bytes("logs/" + name), "no reflog for \(name)")
            #expect(log.last == 0x0A, "a reflog ends with a newline")
            return try String(decoding: log, as: UTF8.self).split(separator: "\n").map { line in
                let tab = line.firstIndex(of: "\t") ?? line.endIndex
                var fields = line[..<tab].split(separator: " ", omittingEmptySubsequences: false).map(String.init)
                try #require(fields.count >= 5 && fields[fields.count - 2].allSatisfy(\.isNumber), "not a reflog line: \(line)")
                fields[fields.count - 2] = "<time>"
                return fields.joined(separator: " ") + line[tab...]
            }
        }
    }

    /// Messages as callers give them: plain, empty (no tab, as `git update-ref` without `-m`), and with the runs of
    /// spaces, tabs and newlines, leading and trailing, that git squeezes to one space (`copy_reflog_msg`).
    static let messages = ["truce: save notes/a.md", "", "  truce: save\tnotes/b  c.md\n\n by laptop \r\n"]

    @Test func anUpdateWritesTheBytesGitUpdateRefWritesAndGitReadsThem() throws {
        let fixture = try Fixture()
        let ids = try (0..<3).map { try fixture.commit("version \($0)") }
        let zero = String(repeating: "0", count: 40)
        var previous: ObjectID?
        for (id, message) in zip(ids, Self.messages) {
            try fixture.repository.updateReference("refs/truce/doc", to: id, expecting: previous, message: message)
            try fixture.gitOutput(["update-ref"] + (message.isEmpty ? [] : ["-m", message]) + ["refs/git/doc", id.hex, previous?.hex ?? zero])
            previous = id
            #expect(fixture.bytes("refs/truce/doc") == Array("\(id.hex)\n".utf8))
            #expect(fixture.bytes("refs/truce/doc") == fixture.bytes("refs/git/doc"), "the ref file git writes")
        }
        let ours = try fixture.reflogWithoutTimes(of: "refs/truce/doc"), theirs = try fixture.reflogWithoutTimes(of: "refs/git/doc")
        #expect(ours.count == 3)
        #expect(ours == theirs, "the reflog lines git writes, but for their times")
        #expect(ours.first?.hasPrefix("\(zero) \(ids[0].hex) \(Fixture.name) <\(Fixture.email)> <time> ") == true)

        // git reads both alike: the value, and the reflog's entries with their messages.
        #expect(
            try fixture.gitOutput(["for-each-ref", "--format=%(objectname)", "refs/truce/doc", "refs/git/doc"]) == "\(ids[2].hex)\n\(ids[2].hex)")
        let reflog = { (name: String) in try fixture.gitOutput(["log", "-g", "--format=%H %gs", name]) }
        #expect(try reflog("refs/truce/doc") == reflog("refs/git/doc"))
        #expect(try reflog("refs/truce/doc").split(separator: "\n").first == "\(ids[2].hex) truce: save notes/b c.md by laptop")
        let fsck = try fixture.git(["fsck", "--strict", "--no-dangling"])
        #expect(fsck.status == 0, "\(fsck.errorOutput)")

        // And Truce reads what git wrote: a direct reference, and a symbolic one through libgit2.
        #expect(try fixture.repository.reference("refs/git/doc") == ids[2])
        try fixture.gitOutput(["symbolic-ref", "refs/git/link", "refs/git/doc"])
        let link = try LooseReferenceFiles.contents(of: fixture.path + "/refs/git/link", name: "refs/git/link")
        #expect({ if case .symbolic? = link { true } else { false } }(), "git's symbolic ref is read as one")
        #expect(try fixture.repository.reference("refs/git/link") == ids[2])
    }

    @Test func aStaleExpectedValueIsRefusedAsGitRefusesItAndChangesNothing() throws {
        let fixture = try Fixture()
        let (first, second, third) = (try fixture.commit("1"), try fixture.commit("2"), try fixture.commit("3"))
        for name in ["refs/truce/doc", "refs/git/doc"] {
            try fixture.repository.updateReference(name, to: first, expecting: nil, message: "create")
            try fixture.repository.updateReference(name, to: second, expecting: first, message: "move")
        }
        let before = (reference: fixture.bytes("refs/truce/doc"), reflog: fixture.bytes("logs/refs/truce/doc"))
        // Expecting the value it had before, expecting none, and expecting one for a reference that does not exist.
        for (name, expected) in [("refs/truce/doc", first), ("refs/truce/doc", nil), ("refs/truce/none", second)] as [(String, ObjectID?)] {
            let error = #expect(throws: GitError.self) {
                try fixture.repository.updateReference(name, to: third, expecting: expected, message: "lost race")
            }
            #expect(error?.isConcurrentModification == true, "\(name) from \(expected?.hex ?? "none"): \(String(describing: error))")
        }
        #expect(fixture.bytes("refs/truce/doc") == before.reference && fixture.bytes("logs/refs/truce/doc") == before.reflog)
        #expect(fixture.bytes("refs/truce/none") == nil && fixture.bytes("logs/refs/truce/none") == nil)
        #expect(fixture.bytes("refs/truce/doc.lock") == nil, "the lock taken for the compare is let go")
        // git refuses the same updates of its copy.
        for (name, expected) in [("refs/git/doc", first.hex), ("refs/git/doc", String(repeating: "0", count: 40)), ("refs/git/none", second.hex)] {
            #expect(try fixture.git(["update-ref", name, third.hex, expected]).status != 0, "git took \(name) from \(expected)")
        }
        #expect(fixture.bytes("refs/git/doc") == before.reference)

        // A delete expecting a stale value is refused too; one expecting the current value removes the file and its
        // reflog, as `git update-ref -d` does.
        let deleteError = #expect(throws: GitError.self) { try fixture.repository.deleteReference("refs/truce/doc", expecting: first) }
        #expect(deleteError?.isConcurrentModification == true)
        #expect(fixture.bytes("refs/truce/doc") == before.reference)
        #expect(try fixture.repository.deleteReference("refs/truce/doc", expecting: second))
        try fixture.gitOutput(["update-ref", "-d", "refs/git/doc", second.hex])
        for name in ["refs/truce/doc", "refs/git/doc"] {
            #expect(fixture.bytes(name) == nil && fixture.bytes("logs/" + name) == nil, "\(name) or its reflog is left")
        }
        #expect(try fixture.gitOutput(["for-each-ref"]).isEmpty)
    }

    @Test func gitsLockIsHeldByBothSides() throws {
        let fixture = try Fixture()
        let (first, second) = (try fixture.commit("1"), try fixture.commit("2"))
        try fixture.repository.updateReference("refs/truce/doc", to: first, expecting: nil, message: "create")
        let before = (reference: fixture.bytes("refs/truce/doc"), reflog: fixture.bytes("logs/refs/truce/doc"))

        // A lock another writer holds (git, here made by hand as git makes it): Truce waits, it does not write past it.
        let lock = fixture.path + "/refs/truce/doc.lock"
        try Data("held\n".utf8).write(to: URL(fileURLWithPath: lock))
        let error = #expect(throws: GitError.self) {
            try fixture.repository.updateReference("refs/truce/doc", to: second, expecting: first, message: "move")
        }
        #expect(error?.isLocked == true, "\(String(describing: error))")
        #expect(fixture.bytes("refs/truce/doc") == before.reference && fixture.bytes("logs/refs/truce/doc") == before.reflog)
        #expect(fixture.bytes("refs/truce/doc.lock") == Array("held\n".utf8), "another writer's lock is not Truce's to remove")
        try FileManager.default.removeItem(atPath: lock)

        // Truce's lock, held: git waits for it (and gives up), and the file stays.
        let descriptor = try LooseReferenceFiles.lock(fixture.path + "/refs/truce/doc")
        defer { close(descriptor) }
        let refused = try fixture.git(["update-ref", "refs/truce/doc", second.hex])
        #expect(refused.status != 0 && refused.errorOutput.contains("refs/truce/doc.lock"), "\(refused.errorOutput)")
        #expect(fixture.bytes("refs/truce/doc") == before.reference)
        unlink(lock)
        try fixture.gitOutput(["update-ref", "refs/truce/doc", second.hex])
        #expect(try fixture.repository.reference("refs/truce/doc") == second, "a lock let go")
    }
}
