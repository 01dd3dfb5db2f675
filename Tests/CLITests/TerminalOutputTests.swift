import Foundation
import TestSupport
import Testing

/// Text that arrives from elsewhere (author names and trailers of commits another replica made with plain git)
/// reaches people's terminals with its control characters escaped, never raw.
@Suite(.timeLimit(.minutes(10))) struct TerminalOutputTests {
    static let evilDevice = "x\u{1B}[31mEVIL\u{1B}[0m\u{7}y"
    static let evilResolver = "r\u{1B}[2Jz"

    @Test func controlCharactersInSyncedAuthorNamesAndTrailersAreEscaped() throws {
        let local = try CLIStore()
        let base = try local.save("notes.md", "v1\n", "--device", "laptop")
        let remote = try CLIStore()
        #expect(try truce(["sync", local.path], store: remote.path).status == 0)

        // On the remote, plain git writes a sibling of the base whose author and Resolved-By trailer hold ESC and BEL.
        let blob = try git(["-C", remote.path, "hash-object", "-w", "--stdin"], input: .text("evil\n")).output
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let tree = try git(["-C", remote.path, "mktree"], input: .text("100644 blob \(blob)\tnotes.md\n")).output
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let message = "Save notes.md\n\nDocument: notes.md\nDevice: evil\nResolved-By: \(Self.evilResolver)\n"
        let commit = try run(
            "/usr/bin/env", ["git", "-C", remote.path, "commit-tree", tree, "-p", base], input: .text(message),
            environment: [
                "GIT_AUTHOR_NAME": Self.evilDevice, "GIT_AUTHOR_EMAIL": "e@x",
                "GIT_COMMITTER_NAME": "c", "GIT_COMMITTER_EMAIL": "c@x",
            ])
        try #require(commit.status == 0, "\(commit.errorOutput)")
        let evil = commit.output.trimmingCharacters(in: .whitespacesAndNewlines)
        try #require(try git(["-C", remote.path, "cat-file", "commit", evil]).output.contains(Self.evilDevice), "git kept the raw name")
        let baseRef = try git(["-C", remote.path, "for-each-ref", "--format=%(refname)", "refs/truce/heads/"]).output
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let directory = String(baseRef[..<baseRef.lastIndex(of: "/")!])
        #expect(try git(["-C", remote.path, "update-ref", directory + "/" + evil, evil]).status == 0)
        #expect(try git(["-C", remote.path, "update-ref", "-d", baseRef]).status == 0)

        try local.save("notes.md", "mine\n", "--device", "laptop", "--base", base)
        let synced = try truce(["sync", remote.path], store: local.path)
        #expect(synced.status == 0, "\(synced.errorOutput)")

        var shownEscaped = 0
        for words in [
            ["versions", "notes.md"], ["log", "notes.md"], ["changes"], ["status"], ["explain", "notes.md"],
            ["conflicts", "notes.md"], ["resolve", "notes.md", "--resolver", "list-conflicts"],
        ] {
            let result = try truce(words, store: local.path)
            #expect(result.status <= 1, "\(words): \(result.errorOutput)")
            for (stream, bytes) in [("stdout", result.stdout), ("stderr", result.stderr)] {
                #expect(!bytes.contains(0x1B) && !bytes.contains(0x07), "\(words) wrote a raw control character to \(stream): \(bytes.escaped)")
            }
            if result.output.contains(#"x\x1B[31mEVIL\x1B[0m\x07y"#) { shownEscaped += 1 }
        }
        #expect(shownEscaped >= 5, "the device name should be shown, escaped, by most of these commands")
        #expect(try truce(["log", "notes.md"], store: local.path).output.contains(#"resolution by r\x1B[2Jz"#))
    }
}
