import Foundation
import TestSupport
import Testing

@testable import TruceGit

/// The one-pass scan of a commit's header (`CommitHeader.swift`) against git on the same bytes: the fields it finds
/// are the ones `git log` prints, and it refuses a commit exactly when `git fsck` does, but for the rows where Truce is
/// knowingly stricter, or git only with `--strict`.
@Suite(.timeLimit(.minutes(10))) struct CommitHeaderTests {
    static let emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

    /// A bare repository made by libgit2, holding the empty tree and commits to name as parents, so that `git fsck`
    /// judges a commit's own bytes and finds every object it names.
    final class Fixture {
        let directory = TemporaryDirectory("truce-commit-header")
        var path: String { directory.file("repo.git") }
        let repository: Repository
        let parents: [ObjectID]

        init() throws {
            repository = try Repository.createBare(at: directory.file("repo.git"))
            let tree = try repository.writeTree([])
            try #require(tree.hex == CommitHeaderTests.emptyTree)
            var parents: [ObjectID] = []
            for number in 0..<5 {
                let who = Signature(
                    name: "Parent \(number)", email: "p\(number)@truce.example", time: 1_764_582_000 + Int64(number), offsetMinutes: 60)
                parents.append(try repository.writeCommit(tree: tree, parents: [], author: who, committer: who, message: "parent \(number)\n"))
            }
            self.parents = parents
        }

        func git(_ arguments: [String], input: Data = Data()) throws -> ProcessResult {
            try run(
                "/usr/bin/env", ["git", "-C", path] + arguments, input: input,
                environment: ["GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"])
        }

        /// Writes `raw` as a commit as it is, whatever git thinks of it (`hash-object --literally`).
        func writeLiterally(_ raw: [UInt8]) throws -> String {
            let written = try git(["hash-object", "-t", "commit", "-w", "--stdin", "--literally"], input: Data(raw))
            try #require(written.status == 0, "\(written.errorOutput)")
            return written.output.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// Removes the loose object `id`, so that the next `git fsck` judges the next commit alone.
        func remove(_ id: String) throws {
            try FileManager.default.removeItem(atPath: path + "/objects/\(id.prefix(2))/\(id.dropFirst(2))")
        }
    }

    /// What the scan finds, as text: the tree's and parents' ids, the author's and committer's idents, the message.
    struct Fields: Equatable {
        var tree: String, parents: [String], author: String, committer: String, message: [UInt8]
    }

    static func scan(_ raw: [UInt8]) -> Result<Fields, CommitHeaderProblem> {
        raw.withUnsafeBufferPointer { bytes in
            CommitHeader.scan(bytes).map { header in
                let text = { (range: Range<Int>) in String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self) }
                return Fields(
                    tree: text(header.tree), parents: header.parents.map(text), author: text(header.author), committer: text(header.committer),
                    message: Array(bytes[min(header.end + 2, bytes.count)...]))
            }
        }
    }

    /// Commits git writes and reads: one libgit2 wrote, a merge of five parents, and headers after the committer
    /// (`encoding`, a `gpgsig` and a `mergetag` of several lines whose blank lines are a space each) that must not
    /// end the header early; messages empty and starting with blank lines.
    @Test func theFieldsFoundAreTheOnesGitReads() throws {
        let fixture = try Fixture()
        let p = fixture.parents.map(\.hex)
        let ident = "Ada Lovelace <ada@truce.example> 1764582000 +0100", other = "truce <> 0 -1230"
        try #require(
            try fixture.git([
                "-c", "user.name=Tagger", "-c", "user.email=t@truce.example", "tag", "-a", "v1", "-m", "tag line\n\nafter a blank line", p[0],
            ]).status == 0)
        let tag = try fixture.git(["cat-file", "tag", "v1"]).output
        let mergetag = "mergetag " + tag.dropLast().split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\n ") + "\n"
        #expect(mergetag.contains("\n \n"), "the tag's blank line is a line of one space in the header")
        let signature = "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n =abcd\n -----END PGP SIGNATURE-----\n"
        let written = try fixture.repository.writeCommit(
            tree: ObjectID(hex: Self.emptyTree)!, parents: [fixture.parents[4]],
            author: Signature(name: "Ada Lovelace", email: "ada@truce.example", time: 1_764_582_000, offsetMinutes: 60),
            committer: Signature(name: "truce", email: "laptop@truce", time: 0, offsetMinutes: -750), message: "save notes/a.md\n\nby laptop\n")
        let texts = [
            "tree \(Self.emptyTree)\nparent \(p[0])\nparent \(p[1])\nparent \(p[2])\nparent \(p[3])\nparent \(p[4])\nauthor \(ident)\ncommitter \(other)\n\nmerge of five\n",
            "tree \(Self.emptyTree)\nparent \(p[1])\nparent \(p[0])\nauthor \(ident)\ncommitter \(other)\n\(mergetag)\nMerge tag 'v1'\n",
            "tree \(Self.emptyTree)\nauthor \(ident)\ncommitter \(other)\nencoding ISO-8859-1\n\(signature)\n\n\nafter blank lines\n",
            "tree \(Self.emptyTree)\nauthor \(ident)\ncommitter \(other)\n\n",
            "tree \(Self.emptyTree)\nparent \(p[2])\nauthor \(ident)\ncommitter \(other)\n\(signature)nonstandard header\n\nmessage\n",
        ]
        var ids = [written.hex]
        for text in texts {
            // Written as git writes any commit it is given: git's own parsing takes each of them.
            let result = try fixture.git(["hash-object", "-t", "commit", "-w", "--stdin"], input: .text(text))
            try #require(result.status == 0, "git refuses \(text): \(result.errorOutput)")
            ids.append(result.output.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        let fsck = try fixture.git(["fsck", "--strict", "--no-dangling"])
        #expect(fsck.status == 0, "git fsck --strict takes them all: \(fsck.errorOutput)")
        for id in ids {
            let raw = Array(try fixture.git(["cat-file", "commit", id]).stdout)
            let format = "format:%T%x00%P%x00%an <%ae> %ad%x00%cn <%ce> %cd%x00%B"
            let shown = try fixture.git(["log", "-1", "--no-walk", "--date=raw", "--format=\(format)", id]).stdout
            let parts = shown.split(separator: 0, maxSplits: 4, omittingEmptySubsequences: false).map { Array($0) }
            try #require(parts.count == 5, "\(shown.escaped)")
            let text = { (bytes: [UInt8]) in String(decoding: bytes, as: UTF8.self) }
            let git = Fields(
                tree: text(parts[0]), parents: text(parts[1]).split(separator: " ").map(String.init), author: text(parts[2]),
                committer: text(parts[3]), message: parts[4])
            #expect(try Self.scan(raw).get() == git, "\(String(decoding: raw, as: UTF8.self))")
        }
        #expect(try Self.scan(Array(fixture.git(["cat-file", "commit", ids[1]]).stdout)).get().parents == p)
    }

    /// How Truce's verdict on a row may differ from `git fsck`'s.
    enum Difference {
        /// None: Truce refuses it exactly when git does.
        case none
        /// git takes it and Truce refuses it, for the reason given: a shape git never writes, which Truce's readers
        /// (`CommitRecord(fsckCleanRaw:)`, the history walk) would read otherwise than libgit2 or git.
        case stricterThanGit(String)
        /// Only `git fsck --strict` refuses it (a warning of git's made an error), and Truce takes it, as git's transfer
        /// checks and plain `git fsck` do.
        case gitStrictOnly(String)
    }

    /// A commit's bytes, what `git fsck` names when it refuses them (nil: it takes them), and how Truce may differ.
    struct Row: CustomStringConvertible {
        let label: String, text: String, gitSays: String?, difference: Difference
        init(_ label: String, _ text: String, git gitSays: String?, _ difference: Difference = .none) {
            (self.label, self.text, self.gitSays, self.difference) = (label, text, gitSays, difference)
        }
        var description: String { "\(label): \(text.debugDescription)" }
    }

    static func rows(parent: String) -> [Row] {
        let tree = "tree \(emptyTree)\n", committer = "committer c <c@c> 1764582000 +0000\n"
        func author(_ ident: String) -> String { "\(tree)author \(ident)\n\(committer)\nmessage\n" }
        let stricterDate = "git's strtoumax skips blanks and takes a sign before the seconds; Truce's readers take digits after one space"
        return [
            Row("ordinary", author("a <a@a> 1764582000 +0100"), git: nil),
            Row("a parent", "\(tree)parent \(parent)\nauthor a <a> 1 +0000\n\(committer)\nm\n", git: nil),
            Row("empty name and email", author(" <> 0 -0000"), git: nil),
            Row("the largest date git keeps", author("a <a> 9223372036854775807 +0000"), git: nil),
            Row("a zone no place has", author("a <a> 1 +9999"), git: nil),
            Row("no message", "\(tree)author a <a> 1 +0000\n\(committer)\n", git: nil),
            Row("an unknown header after the committer", "\(tree)author a <a> 1 +0000\n\(committer)x-truce y\n\nm\n", git: nil),
            Row("empty", "", git: "bogus commit object"),
            Row("no tree", "author a <a> 1 +0000\n\(committer)\nm\n", git: "bogus commit object"),
            Row("a parent before the tree", "parent \(parent)\n\(tree)author a <a> 1 +0000\n\(committer)\nm\n", git: "bogus commit object"),
            Row("a blank line first", "\n\(tree)author a <a> 1 +0000\n\(committer)\nm\n", git: "bogus commit object"),
            Row("a short tree id", "tree \(emptyTree.dropLast())\nauthor a <a> 1 +0000\n\(committer)\nm\n", git: "bogus commit object"),
            Row("a space after the tree id", "tree \(emptyTree) \nauthor a <a> 1 +0000\n\(committer)\nm\n", git: "bogus commit object"),
            Row("a carriage return after the tree id", "tree \(emptyTree)\r\nauthor a <a> 1 +0000\n\(committer)\nm\n", git: "bogus commit object"),
            Row("a bad parent id", "\(tree)parent xyz\nauthor a <a> 1 +0000\n\(committer)\nm\n", git: "bad parents"),
            Row("two trees", "\(tree)\(tree)author a <a> 1 +0000\n\(committer)\nm\n", git: "missingAuthor"),
            Row("no author", "\(tree)\(committer)\nm\n", git: "missingAuthor"),
            Row("another header before the author", "\(tree)x y\nauthor a <a> 1 +0000\n\(committer)\nm\n", git: "missingAuthor"),
            Row("two authors", "\(tree)author a <a> 1 +0000\nauthor b <b> 2 +0000\n\(committer)\nm\n", git: "multipleAuthors"),
            Row("no committer", "\(tree)author a <a> 1 +0000\n\nm\n", git: "missingCommitter"),
            Row("a parent after the author", "\(tree)author a <a> 1 +0000\nparent \(parent)\n\(committer)\nm\n", git: "missingCommitter"),
            Row("a NUL in the header", "\(tree)author a <a\0> 1 +0000\n\(committer)\nm\n", git: "nulInHeader"),
            Row("no newline after the last header", "\(tree)author a <a> 1 +0000\ncommitter c <c@c> 1 +0000", git: "unterminatedHeader"),
            Row("no name", author("<a> 1 +0000"), git: "missingNameBeforeEmail"),
            Row("a '>' in the name", author("a> <a> 1 +0000"), git: "badName"),
            Row("no email", author("a 1 +0000"), git: "missingEmail"),
            Row("no space before the email", author("a<a> 1 +0000"), git: "missingSpaceBeforeEmail"),
            Row("a '<' in the name", author("a<b <a> 1 +0000"), git: "missingSpaceBeforeEmail"),
            Row("a '<' in the email", author("a <a<b> 1 +0000"), git: "badEmail"),
            Row("an email not closed", author("a <a 1 +0000"), git: "badEmail"),
            Row("no space before the date", author("a <a>1 +0000"), git: "missingSpaceBeforeDate"),
            Row("no date", author("a <a> +0000"), git: "badDate"),
            Row("letters in the date", author("a <a> 1x +0000"), git: "badDate"),
            Row("a tab before the zone", author("a <a> 1\t+0000"), git: "badDate"),
            Row("a zero-padded date", author("a <a> 01 +0000"), git: "zeroPaddedDate"),
            Row("a date past 2^63 - 1", author("a <a> 9223372036854775808 +0000"), git: "badDateOverflow"),
            Row("a date of 19 nines", author("a <a> 9999999999999999999 +0000"), git: "badDateOverflow"),
            Row("a date of 20 digits", author("a <a> 18446744073709551615 +0000"), git: "badDateOverflow"),
            Row("a negative date", author("a <a> -1 +0000"), git: "badDateOverflow"),
            Row("a zone of five digits", author("a <a> 1 +00000"), git: "badTimezone"),
            Row("a zone of three digits", author("a <a> 1 +000"), git: "badTimezone"),
            Row("a zone without a sign", author("a <a> 1 0000"), git: "badTimezone"),
            Row("a space after the zone", author("a <a> 1 +0000 "), git: "badTimezone"),
            Row("a bad committer", "\(tree)author a <a> 1 +0000\ncommitter c <c> 1 +00\n\nm\n", git: "badTimezone"),
            Row(
                "no blank line, the last header ended", "\(tree)author a <a> 1 +0000\n\(committer)", git: nil,
                .stricterThanGit("git takes a commit without a message; Truce's readers find the message after a blank line")),
            Row(
                "upper-case hex in the tree id", "tree \(emptyTree.uppercased())\nauthor a <a> 1 +0000\n\(committer)\nm\n", git: nil,
                .stricterThanGit("git parses hex in either case but writes lower case only: a shape no git makes")),
            Row(
                "upper-case hex in a parent id", "\(tree)parent \(parent.uppercased())\nauthor a <a> 1 +0000\n\(committer)\nm\n", git: nil,
                .stricterThanGit("as for the tree")),
            Row("two spaces before the date", author("a <a>  1 +0000"), git: nil, .stricterThanGit(stricterDate)),
            Row("a space and a zero-padded date", author("a <a>  01 +0000"), git: nil, .stricterThanGit(stricterDate)),
            Row("a '+' before the date", author("a <a> +1 +0000"), git: nil, .stricterThanGit(stricterDate)),
            Row(
                "an author after the committer", "\(tree)author a <a> 1 +0000\n\(committer)author b <b> 2 +0000\n\nm\n", git: nil,
                .stricterThanGit("git 2.39 reads nothing past the committer; one reader could take this date and another skip it")),
            Row(
                "a second committer", "\(tree)author a <a> 1 +0000\n\(committer)\(committer)\nm\n", git: nil,
                .stricterThanGit("as for a second author")),
            Row(
                "a NUL in the message", "\(tree)author a <a> 1 +0000\n\(committer)\nbefore\0after\n", git: nil,
                .gitStrictOnly("nulInCommit is a warning of git's; libgit2 and Truce read the message up to the NUL")),
        ]
    }

    @Test func aCommitIsRefusedExactlyWhenGitFsckRefusesIt() throws {
        let fixture = try Fixture()
        var refusedByHashObject = 0
        for row in Self.rows(parent: fixture.parents[0].hex) {
            let raw = Array(row.text.utf8)
            let id = try fixture.writeLiterally(raw)
            let fsck = try fixture.git(["fsck", "--no-dangling"]), strict = try fixture.git(["fsck", "--strict", "--no-dangling"])
            // `hash-object` without `--literally` parses what it writes (git 2.39: as a reader does, not as fsck does).
            let hashObject = try fixture.git(["hash-object", "-t", "commit", "--stdin"], input: Data(raw))
            try fixture.remove(id)
            let truceRefuses = (try? Self.scan(raw).get()) == nil

            // The row is what it says: git takes it, or refuses it for the reason named.
            if let says = row.gitSays {
                #expect(fsck.status != 0 && fsck.errorOutput.contains(says), "git fsck does not say \(says) for \(row): \(fsck.errorOutput)")
            } else if case .gitStrictOnly = row.difference {
                #expect(fsck.status == 0 && strict.status != 0, "\(row): \(strict.errorOutput)")
            } else {
                #expect(fsck.status == 0 && strict.status == 0, "git fsck refuses \(row): \(strict.errorOutput)")
            }
            switch row.difference {
            case .none:
                #expect(
                    truceRefuses == (fsck.status != 0),
                    "Truce \(truceRefuses ? "refuses" : "takes") what git fsck \(fsck.status != 0 ? "refuses" : "takes"): \(row)")
                #expect((strict.status != 0) == (fsck.status != 0), "\(row)")
            case .stricterThanGit, .gitStrictOnly:
                #expect(truceRefuses == (row.difference.isStricter), "\(row)")
            }
            if hashObject.status != 0 {
                refusedByHashObject += 1
                #expect(truceRefuses, "git hash-object refuses what Truce takes: \(row)")
            }
        }
        #expect(refusedByHashObject > 0, "hash-object refuses some rows, so the last check is not idle")
    }
}

extension CommitHeaderTests.Difference {
    var isStricter: Bool {
        if case .stricterThanGit = self { true } else { false }
    }
}
