import Foundation
import TestSupport
import Testing

/// Every bad input gets one clear line on stderr, the right exit code, and leaves the store exactly as it was.
@Suite(.timeLimit(.minutes(10))) struct BadInputTests {
    struct Row: CustomTestStringConvertible, Sendable {
        let words: [String]
        let status: Int32
        let message: String
        var testDescription: String { words.joined(separator: " ") }
    }

    /// `$FILE` is a readable file, `$DIR` a directory, `$OTHER` a version of another document, `$A` a version of a.txt.
    static let rows: [Row] = [
        Row(words: ["save", "", "$FILE"], status: 2, message: "invalid document key '': it is empty"),
        Row(words: ["save", "/etc/passwd", "$FILE"], status: 2, message: "it is absolute"),
        Row(words: ["save", "a/../b", "$FILE"], status: 2, message: "'..' segment"),
        Row(words: ["save", "..", "$FILE"], status: 2, message: "'..' segment"),
        Row(words: ["save", "a//b", "$FILE"], status: 2, message: "empty segment"),
        Row(words: ["save", "notes/", "$FILE"], status: 2, message: "ends with '/'"),
        Row(words: ["save", "bad\u{1}key", "$FILE"], status: 2, message: "invalid document key 'bad\\x01key'"),
        Row(words: ["save", "line\nbreak", "$FILE"], status: 2, message: "invalid document key 'line\\nbreak'"),
        Row(words: ["save", String(repeating: "k", count: 1025), "$FILE"], status: 2, message: "1025 bytes long"),
        Row(words: ["save", ".git/config", "$FILE"], status: 2, message: "'.git' segment"),
        Row(words: ["save", ".gi\u{200C}t/config", "$FILE"], status: 2, message: "how HFS+ or NTFS may spell '.git'"),
        Row(words: ["save", "GIT~1", "$FILE"], status: 2, message: "how HFS+ or NTFS may spell '.git'"),
        Row(words: ["save", "sub/.gitmodules", "$FILE"], status: 2, message: "may spell '.gitmodules'"),
        Row(words: ["save", "a.txt", "$FILE", "--date", "yesterday"], status: 2, message: "invalid date 'yesterday'"),
        Row(
            words: ["save", "a.txt", "$FILE", "--date", "1900-01-01T00:00:00Z"], status: 2,
            message: "date 1900-01-01T00:00:00Z is outside what git stores exactly: 1970-01-01T00:00:00Z to 2106-02-07T06:28:15Z"),
        Row(words: ["delete", "a.txt", "--date", "2106-02-07T06:28:16Z"], status: 2, message: "outside what git stores exactly"),
        Row(words: ["save", "a.txt", "/nonexistent/file"], status: 2, message: "cannot read '/nonexistent/file': no such file"),
        Row(words: ["save", "a.txt", "$DIR"], status: 2, message: "it is a directory"),
        Row(words: ["save", "a.txt", "$FILE", "--base", "0123456789abcdef0123456789abcdef01234567"], status: 2, message: "no version"),
        Row(words: ["save", "a.txt", "$FILE", "--base", "$OTHER"], status: 2, message: "belongs to 'other.txt', not to 'a.txt'"),
        Row(words: ["save", "a.txt", "$FILE", "--base", "not-hex"], status: 2, message: "no version 'not-hex'"),
        Row(words: ["save", "a.txt", "$FILE", "--device", ""], status: 2, message: "invalid device name '': it is empty"),
        Row(words: ["save", "a.txt", "$FILE", "--device", "x <y>"], status: 2, message: "'<' and '>'"),
        Row(words: ["save"], status: 2, message: "save: missing DOC; see 'truce help save'"),
        Row(words: ["save", "a.txt", "$FILE", "extra"], status: 2, message: "unexpected argument 'extra'"),
        Row(words: ["save", "a.txt", "--bogus"], status: 2, message: "unknown option '--bogus'"),
        Row(words: ["save", "a.txt", "$FILE", "--base"], status: 2, message: "option '--base' needs a value"),
        Row(words: ["cat", "a.txt", "--version", "deadbeef"], status: 2, message: "no version 'deadbeef'"),
        Row(words: ["cat", "a.txt", "--version", "$OTHER"], status: 2, message: "belongs to 'other.txt'"),
        Row(words: ["cat", "missing.txt"], status: 2, message: "no document 'missing.txt'"),
        Row(words: ["delete", "missing.txt"], status: 2, message: "no document 'missing.txt'"),
        Row(words: ["delete", "a.txt", "--base", "$OTHER"], status: 2, message: "belongs to 'other.txt'"),
        Row(words: ["versions", "missing.txt"], status: 2, message: "no document 'missing.txt'"),
        Row(words: ["log", "missing.txt"], status: 2, message: "no document 'missing.txt'"),
        Row(words: ["explain", "missing.txt"], status: 2, message: "no document 'missing.txt'"),
        Row(words: ["versions", "a/../../etc"], status: 2, message: "'..' segment"),
        Row(words: ["init"], status: 2, message: "already exists"),
        Row(words: ["status", "extra"], status: 2, message: "unexpected argument 'extra'"),
        Row(words: ["import"], status: 2, message: "import: missing DIR"),
        Row(words: ["import", "/nonexistent/folder"], status: 2, message: "cannot use folder '/nonexistent/folder': it does not exist"),
        Row(words: ["import", "$FILE"], status: 2, message: "it is not a folder"),
        Row(words: ["import", "$DIR", "--prefix", "../up/"], status: 2, message: "'..' segment"),
        Row(words: ["import", "$DIR", "--date", "soon"], status: 2, message: "invalid date 'soon'"),
        Row(words: ["import", "$DIR", "--device", ""], status: 2, message: "invalid device name"),
        Row(words: ["export"], status: 2, message: "export: missing DIR"),
        Row(words: ["export", "$DIR"], status: 2, message: "it is not empty"),
        Row(words: ["export", "$FILE"], status: 2, message: "it is a file, not a folder"),
        Row(words: ["export", "$DIR/new", "--version-at", "later"], status: 2, message: "invalid date 'later'"),
        Row(words: ["status", "--store", ""], status: 2, message: "--store needs a directory, not an empty name"),
        Row(words: ["review", "--restore", "/theme"], status: 2, message: "review: --restore needs DOC"),
        Row(words: ["review", "a.txt", "--restore", "/theme"], status: 2, message: "cannot restore in 'a.txt': no automatic resolution dropped"),
        Row(words: ["review", "--since", "yesterday"], status: 2, message: "invalid change token 'yesterday'"),
        Row(words: ["review", "a.txt", "extra"], status: 2, message: "unexpected argument 'extra'"),
        Row(words: ["review", "a/../b"], status: 2, message: "'..' segment"),
    ]

    @Test(arguments: rows)
    func rejectsWithOneLineAndChangesNothing(row: Row) throws {
        let store = try CLIStore()
        let other = try store.save("other.txt", "other\n")
        let mine = try store.save("a.txt", "mine\n")
        let file = store.directory.write(.text("content\n"), to: "input.txt")
        let words = row.words.map { word in
            word.replacingOccurrences(of: "$FILE", with: file).replacingOccurrences(of: "$DIR", with: store.directory.path)
                .replacingOccurrences(of: "$OTHER", with: other).replacingOccurrences(of: "$A", with: mine)
        }
        let before = snapshot(ofStore: store.path)
        let result = try truce(words, store: store.path)
        #expect(result.status == row.status)
        #expect(result.errorLines.count == 1, "stderr: \(result.errorOutput)")
        #expect(result.errorLines.first?.hasPrefix("truce: ") == true)
        #expect(result.errorLines.first?.contains(row.message) == true, "stderr: \(result.errorOutput)")
        #expect(result.stdout.isEmpty)
        #expect(snapshot(ofStore: store.path) == before)
    }

    @Test func aMissingOrForeignStoreIsAStoreFailure() throws {
        let directory = TemporaryDirectory()
        let file = directory.write(.text("x"), to: "file")
        #expect(try git("init", "-q", "--bare", directory.file("plain.git")).status == 0)
        let cases = [
            (directory.file("missing"), "no store at \(directory.file("missing"))"),
            (file, "is not a Truce store: it is a file"),
            (directory.file("plain.git"), "is not a Truce store: it is a git repository without 'truce.version'"),
            (directory.path, "is not a Truce store"),
        ]
        for (path, message) in cases {
            let before = snapshot(ofStore: directory.path)
            let result = try truce(["status"], store: path)
            #expect(result.status == 3)
            #expect(result.errorLines.count == 1)
            #expect(result.errorLines.first?.contains(message) == true, "stderr: \(result.errorOutput)")
            #expect(snapshot(ofStore: directory.path) == before)
        }
    }

    @Test func aCorruptStoreIsAStoreFailureWithOneLine() throws {
        let store = try CLIStore()
        let id = try store.save("a.txt", "x\n")
        try unpackObjects(inStore: store.path)
        // Remove the version's commit object: the head now points at nothing.
        let object = store.path + "/objects/" + id.prefix(2) + "/" + id.dropFirst(2)
        try FileManager.default.removeItem(atPath: object)
        let result = try store.run("cat", "a.txt")
        #expect(result.status == 3)
        #expect(result.errorLines.count == 1)
        #expect(result.errorLines.first?.hasPrefix("truce: store failure:") == true, "stderr: \(result.errorOutput)")
        #expect(!result.errorOutput.contains("Fatal error"))
    }
}
