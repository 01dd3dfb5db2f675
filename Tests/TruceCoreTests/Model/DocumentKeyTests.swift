import TestSupport
import Testing

@testable import TruceCore

@Suite(.timeLimit(.minutes(10))) struct DocumentKeyTests {
    @Test(arguments: [
        ("", "empty"),
        ("/etc/passwd", "absolute"),
        ("a/../b", "'..'"),
        ("..", "'..'"),
        ("a/./b", "'.'"),
        ("a//b", "empty segment"),
        ("notes/", "ends with '/'"),
        ("a\u{0}b", "control"),
        ("a\nb", "control"),
        ("tab\there", "control"),
        ("bell\u{7}", "control"),
        ("del\u{7F}", "control"),
        (".git/config", "'.git'"),
        ("x/.GIT/y", "'.git'"),
        (String(repeating: "a", count: 1025), "1025 bytes"),
        (String(repeating: "é", count: 513), "1026 bytes"),
    ])
    func rejectsInvalidKeys(key: String, reason: String) {
        #expect {
            try DocumentKey(key)
        } throws: { error in
            guard case .invalidKey(let rejected, let why) = error as? TruceError else { return false }
            return rejected == key && why.contains(reason)
        }
    }

    @Test(arguments: [
        "notes/todo.md", "HEAD", "refs/heads/main", "a.lock", "dir.lock/file", "a;rm -rf b.md", "$(touch x).md",
        "with space/and: colon", "ünïcødé/文書.txt", "a..b", ".hidden", "back\\slash", "~tilde^caret:colon?star*[",
        "@{-1}", String(repeating: "a", count: 1024),
    ])
    func acceptsKeysThatAreOnlyUnusual(key: String) throws {
        #expect(try DocumentKey(key).rawValue == key)
    }

    @Test func referenceNamesHashTheKeyAsGitHashObjectDoes() throws {
        let key: DocumentKey = "notes/todo.md"
        let hash = try git("hash-object", "--stdin", input: .text("notes/todo.md")).output.trimmingCharacters(in: .whitespacesAndNewlines)
        let expected = "refs/truce/heads/" + hash.prefix(2) + "/" + hash.dropFirst(2) + "/"
        #expect(ReferenceLayout.headsDirectory(of: key) == expected)
    }

    @Test func keysDifferingOnlyInCaseGetDifferentDirectories() throws {
        #expect(ReferenceLayout.headsDirectory(of: "Readme.md") != ReferenceLayout.headsDirectory(of: "README.md"))
    }
}
