import Foundation
import TestSupport
import Testing

/// Bad input to every command: exit code 2 or 3, exactly one line on stderr, no crash, and nothing changed on disk.
///
/// Each row runs in its own copy of one fixture directory, which holds a
/// store (a settled document, one in conflict, a resolved one, a deleted
/// one, a JSON document in conflict), a second store to sync with, a plain
/// git repository and a few input files. "Nothing changed" compares every
/// file of that whole directory byte for byte, so the refs, reflogs, objects
/// and config of both stores, and the inputs, are all covered.
@Suite(.timeLimit(.minutes(20))) struct ReliabilityBadInputTests {
    /// What is wrong with the store itself before the command runs.
    enum Setup: String, Sendable {
        case none
        /// The store's config does not parse.
        case brokenConfig
        /// `info/attributes` holds an empty `merge=`.
        case brokenAttributes
        /// `--store` names a directory that does not exist.
        case noStore
        /// A live process (this test) holds the prune lock.
        case pruneLockHeld
    }

    struct Row: CustomTestStringConvertible, Sendable {
        let words: [String]
        let status: Int32
        let message: String
        var setup: Setup = .none
        var testDescription: String {
            (setup == .none ? "" : "[\(setup.rawValue)] ") + (words.isEmpty ? "(no command)" : words.joined(separator: " "))
        }
    }

    /// `$FILE` a text file, `$BIN` a binary one, `$NOTJSON` text that is not JSON, `$DIR` a directory, `$PLAIN` a plain
    /// git repository, `$REMOTE` a second store, `$C1` a head of c.txt, `$OTHER` a version of other.txt.
    static let rows: [Row] =
        [
            Row(words: [], status: 2, message: "missing COMMAND"),
            Row(words: ["frobnicate"], status: 2, message: "unknown command 'frobnicate'"),
            Row(words: ["help", "frobnicate"], status: 2, message: "no command named 'frobnicate'"),
            Row(words: ["init"], status: 2, message: "already exists"),
            Row(words: ["save", "a.txt", "$FILE", "--base", "$C1"], status: 2, message: "belongs to 'c.txt', not to 'a.txt'"),
            Row(words: ["save", "a.txt", "$FILE", "--date", "2026-13-45T00:00:00Z"], status: 2, message: "invalid date"),
            Row(words: ["save", "a.txt", "$FILE", "--device", "tab\there"], status: 2, message: "invalid device name"),
            Row(words: ["save", "a\\b/../c", "$FILE"], status: 2, message: "'..' segment"),
            Row(words: ["cat", "d.txt", "--version", "$OTHER"], status: 2, message: "belongs to 'other.txt'"),
            Row(words: ["cat", "c.txt", "--version", "12"], status: 2, message: "no version '12'"),
            Row(words: ["delete", "d.txt"], status: 2, message: "is already deleted"),
            Row(words: ["versions"], status: 2, message: "versions: missing DOC"),
            Row(words: ["status", "--bogus"], status: 2, message: "unknown option '--bogus'"),
            Row(words: ["log", "a.txt", "extra"], status: 2, message: "unexpected argument 'extra'"),
            Row(words: ["explain"], status: 2, message: "explain: missing DOC"),
            Row(words: ["explain", "missing.txt"], status: 2, message: "no document 'missing.txt'"),
            Row(words: ["explain", "a/./b"], status: 2, message: "invalid document key"),
            Row(words: ["explain", "a.txt", "extra"], status: 2, message: "unexpected argument 'extra'"),
            Row(words: ["resolve"], status: 2, message: "resolve: missing DOC"),
            Row(words: ["resolve", "a.txt", "--take", "H1=ours"], status: 2, message: "'a.txt' is not in conflict"),
            Row(words: ["resolve", "missing.txt"], status: 2, message: "no document 'missing.txt'"),
            Row(words: ["resolve", "c.txt", "--resolver", "no-such"], status: 2, message: "unknown resolver 'no-such'"),
            Row(words: ["resolve", "c.txt", "--take", "H1"], status: 2, message: "--take needs HUNK=CHOICE"),
            Row(words: ["resolve", "c.txt", "--take", "H1=sideways"], status: 2, message: "unknown choice 'sideways'"),
            Row(words: ["resolve", "c.txt", "--take", "H9=ours"], status: 2, message: "no conflict point H9"),
            Row(words: ["resolve", "c.txt", "--take", "=ours"], status: 2, message: "no conflict point"),
            Row(words: ["resolve", "c.txt", "--take", "H1=ours", "--take", "H1=theirs"], status: 2, message: "answered twice"),
            Row(words: ["resolve", "c.txt", "--take", "H1=$OTHER"], status: 2, message: "no head or base of c.txt"),
            Row(words: ["resolve", "c.txt", "--take", "H1=file:/nonexistent/answer"], status: 2, message: "cannot read '/nonexistent/answer'"),
            Row(words: ["resolve", "c.txt", "--content", "/nonexistent/file"], status: 2, message: "cannot read '/nonexistent/file'"),
            Row(words: ["resolve", "c.txt", "--content", "$FILE", "--delete"], status: 2, message: "only one of"),
            Row(words: ["resolve", "c.txt", "--take", "H1=ours", "--resolver", "three-way"], status: 2, message: "needs neither"),
            Row(words: ["resolve", "j.json", "--content", "$NOTJSON"], status: 2, message: "nothing was written"),
            Row(words: ["resolve", "c.txt", "--dry-run", "--delete"], status: 2, message: "needs neither"),
            Row(words: ["conflicts"], status: 2, message: "conflicts: missing DOC"),
            Row(words: ["conflicts", "missing.txt"], status: 2, message: "no document 'missing.txt'"),
            Row(words: ["conflicts", "c.txt", "extra"], status: 2, message: "unexpected argument 'extra'"),
            Row(words: ["conflicts", "bad\u{1}key"], status: 2, message: "invalid document key"),
            Row(words: ["reopen"], status: 2, message: "reopen: missing DOC"),
            Row(words: ["reopen", "a.txt"], status: 2, message: "nothing to reopen"),
            Row(words: ["reopen", "c.txt"], status: 2, message: "nothing to reopen"),
            Row(words: ["reopen", "missing.txt"], status: 2, message: "no document 'missing.txt'"),
            Row(words: ["reopen", "r.txt", "extra"], status: 2, message: "unexpected argument 'extra'"),
            Row(words: ["prune", "--expire", "soon"], status: 2, message: "invalid expiry 'soon'"),
            Row(words: ["prune", "--expire", "-3.days"], status: 2, message: "invalid expiry '-3.days'"),
            Row(words: ["prune", "--expire"], status: 2, message: "option '--expire' needs a value"),
            Row(words: ["prune", "--now", "--expire", "1.day"], status: 2, message: "give --now or --expire, not both"),
            Row(words: ["prune", "extra"], status: 2, message: "unexpected argument 'extra'"),
            Row(words: ["prune"], status: 3, message: "the store is busy", setup: .pruneLockHeld),
            Row(words: ["sync"], status: 2, message: "sync: missing REMOTE"),
            Row(words: ["sync", "/nonexistent/store"], status: 2, message: "cannot sync with '/nonexistent/store'"),
            Row(words: ["sync", "file:///nonexistent/store"], status: 2, message: "cannot sync with 'file:///nonexistent/store'"),
            Row(words: ["sync", "$DIR"], status: 2, message: "is neither a Truce store nor a bare git repository"),
            Row(words: ["sync", "$FILE"], status: 2, message: "is neither a Truce store nor a bare git repository"),
            Row(words: ["sync", "$REMOTE", "extra"], status: 2, message: "unexpected argument 'extra'"),
            Row(words: ["changes", "--since", "garbage"], status: 2, message: "invalid change token 'garbage'"),
            Row(words: ["changes", "--since", "t1-0123456789abcdef0123456789abcdef01234567"], status: 2, message: "not a position"),
            Row(words: ["changes", "--since"], status: 2, message: "option '--since' needs a value"),
            Row(words: ["changes", "--exclude-author"], status: 2, message: "option '--exclude-author' needs a value"),
            Row(words: ["changes", "extra"], status: 2, message: "unexpected argument 'extra'"),
            Row(words: ["merge-driver", "$FILE", "$FILE"], status: 2, message: "missing OTHER"),
            Row(words: ["merge-driver", "--resolver", "nope", "$FILE", "$FILE", "$FILE"], status: 2, message: "merge-driver runs structured"),
            Row(words: ["merge-driver", "--marker-size", "x", "$FILE", "$FILE", "$FILE"], status: 2, message: "needs a whole number"),
            Row(words: ["merge-driver", "$FILE", "/nonexistent/current", "$FILE"], status: 2, message: "cannot read '/nonexistent/current'"),
            Row(words: ["merge-driver", "$FILE", "$FILE", "$FILE", "x.json", "extra"], status: 2, message: "unexpected argument"),
            Row(words: ["resolve", "c.txt"], status: 2, message: "'merge=' needs a resolver name", setup: .brokenAttributes),
            Row(words: ["resolve", "c.txt", "--dry-run"], status: 2, message: "'merge=' needs a resolver name", setup: .brokenAttributes),
        ] + storeCommands.map { Row(words: $0, status: 2, message: "invalid configuration", setup: .brokenConfig) }
        + storeCommands.map { Row(words: $0, status: 3, message: "no store at", setup: .noStore) }

    /// One good command line of every command that opens the store.
    static let storeCommands: [[String]] = [
        ["save", "a.txt", "$FILE"], ["cat", "a.txt"], ["delete", "a.txt"], ["versions", "a.txt"], ["status"], ["log", "a.txt"],
        ["explain", "a.txt"], ["resolve", "c.txt"], ["conflicts", "c.txt"], ["reopen", "r.txt"], ["prune"], ["prune", "--now"],
        ["sync", "$REMOTE"], ["changes"],
    ]

    /// The directory every row copies, made once.
    static let fixture: Fixture = {
        do {
            let fixture = try Fixture()
            // A static is never released, so its directory would outlive the test process.
            atexit { try? FileManager.default.removeItem(atPath: ReliabilityBadInputTests.fixture.directory.path) }
            return fixture
        } catch {
            fatalError("cannot make the bad-input fixture: \(error)")
        }
    }()

    final class Fixture: Sendable {
        let directory = TemporaryDirectory("truce-bad-input")
        /// `$NAME` to the text it stands for, with `@` for the directory a row runs in.
        let substitutions: [String: String]

        init() throws {
            let store = directory.file("store")
            func run(_ words: String..., input: String = "") throws -> String {
                let result = try truce(words, store: store, input: Data(input.utf8))
                guard result.status == 0 else { throw ReliabilityFailure("fixture: truce \(words) failed: \(result.errorOutput)") }
                return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
            }
            _ = try run("init")
            _ = try run("save", "a.txt", "-", input: "mine\n")
            let other = try run("save", "other.txt", "-", input: "other\n")
            var base = try run("save", "c.txt", "-", input: "x\n")
            let c1 = try run("save", "c.txt", "-", "--base", base, "--device", "laptop", input: "y\n")
            _ = try run("save", "c.txt", "-", "--base", base, "--device", "phone", input: "z\n")
            base = try run("save", "r.txt", "-", input: "r\n")
            _ = try run("save", "r.txt", "-", "--base", base, input: "r1\n")
            _ = try run("save", "r.txt", "-", "--base", base, input: "r2\n")
            _ = try run("resolve", "r.txt", "--resolver", "overwrite-with-current")
            _ = try run("save", "d.txt", "-", input: "gone\n")
            _ = try run("delete", "d.txt")
            base = try run("save", "j.json", "-", input: "{\"a\": 0}\n")
            _ = try run("save", "j.json", "-", "--base", base, input: "{\"a\": 1}\n")
            _ = try run("save", "j.json", "-", "--base", base, input: "{\"a\": 2}\n")
            guard try truce(["init"], store: directory.file("remote")).status == 0,
                try git("init", "-q", "--bare", directory.file("plain.git")).status == 0
            else { throw ReliabilityFailure("fixture: init failed") }
            directory.write(Data("a\nb\nc\n".utf8), to: "input.txt")
            directory.write(Data("a\n\0b\n".utf8), to: "binary.bin")
            directory.write(Data("not json\n".utf8), to: "notjson.txt")
            try FileManager.default.createDirectory(atPath: directory.file("folder"), withIntermediateDirectories: true)
            substitutions = [
                "$FILE": "@/input.txt", "$BIN": "@/binary.bin", "$NOTJSON": "@/notjson.txt", "$DIR": "@/folder",
                "$PLAIN": "@/plain.git", "$REMOTE": "@/remote", "$C1": c1, "$OTHER": other,
            ]
        }

        /// A fresh copy of the fixture for one row.
        func copy() throws -> TemporaryDirectory {
            let copy = TemporaryDirectory("truce-bad-input-row")
            for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
                try FileManager.default.copyItem(atPath: directory.file(name), toPath: copy.file(name))
            }
            return copy
        }
    }

    @Test(arguments: rows)
    func rejectsWithOneLineAndChangesNothing(row: Row) throws {
        let fixture = Self.fixture
        let directory = try fixture.copy()
        var store = directory.file("store")
        switch row.setup {
        case .none: break
        case .brokenConfig:
            let config = try FileHandle(forWritingTo: URL(fileURLWithPath: store + "/config"))
            try config.seekToEnd()
            try config.write(contentsOf: Data("[broken\n".utf8))
            try config.close()
        case .brokenAttributes:
            try Data("*.txt merge=\n".utf8).write(to: URL(fileURLWithPath: store + "/info/attributes"))
        case .noStore:
            store = directory.file("missing")
        case .pruneLockHeld:
            try Data("\(getpid())\n".utf8).write(to: URL(fileURLWithPath: store + "/truce-prune.lock"))
        }
        let words = row.words.map { word in
            fixture.substitutions.reduce(word) {
                $0.replacingOccurrences(of: $1.key, with: $1.value.replacingOccurrences(of: "@", with: directory.path))
            }
        }
        let before = snapshot(ofStore: directory.path)
        let result = try truce(words, store: store)

        #expect(result.status == row.status, "exit \(result.status); stderr: \(result.errorOutput)")
        #expect([2, 3].contains(result.status))
        #expect(result.errorLines.count == 1, "stderr: \(result.errorOutput.debugDescription)")
        #expect(result.errorLines.first?.hasPrefix("truce: ") == true, "stderr: \(result.errorOutput.debugDescription)")
        #expect(result.errorLines.first?.contains(row.message) == true, "stderr: \(result.errorOutput.debugDescription)")
        for crash in ["Fatal error", "Stack dump", "Backtrac", "Program crashed"] {
            #expect(!result.errorOutput.contains(crash) && !result.output.contains(crash))
        }
        let after = snapshot(ofStore: directory.path)
        let changed = Set(before.keys).union(after.keys).filter { before[$0] != after[$0] }.sorted()
        #expect(changed.isEmpty, "files changed: \(changed)")
    }

    /// A grace period too long to subtract from today keeps everything, like `never`, instead of crashing prune.
    @Test func anEnormousGracePeriodIsNeverNotACrash() throws {
        let directory = try Self.fixture.copy()
        let result = try truce(["prune", "--expire", "1e20.weeks"], store: directory.file("store"))
        #expect(result.status == 0, "stderr: \(result.errorOutput)")
        #expect(!result.errorOutput.contains("Fatal error"))
        #expect(try Reliability.fsckProblems(directory.file("store")).isEmpty)
        #expect(try truce(["cat", "r.txt"], store: directory.file("store")).status == 0)
    }
}
