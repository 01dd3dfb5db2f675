import Foundation
import TestSupport
import Testing

@testable import TruceCore

/// Keys git treats as `.git`, `.gitmodules` or `.gitattributes` in some spelling are refused; every other key
/// leaves a store that `git fsck --strict` accepts and reads back byte for byte.
@Suite(.timeLimit(.minutes(10))) struct ReservedKeyTests {
    /// Names `git fsck --strict` rejects in a tree (the oracle), each of which Truce must refuse as a key segment.
    static let spellingsGitRejects = [
        ".git", ".GIT", ".gi\u{200C}t", ".git\u{FEFF}", "\u{200D}.Git", ".g\u{202E}it", ".git.", ".git ", ".git . .",
        ".git:stream", ".git::$INDEX_ALLOCATION", "git~1", "GIT~1", "git~1.", "x\\.git", "a\\b\\GIT~1 ",
        ".gitmodules", ".GITMODULES", ".gitmodules\u{200C}", ".gitmodules.", "gitmod~1", "GI7EBA~1", "x\\.gitmodules",
        ".gitattributes", "gitatt~2", "gi7d29~1",
    ]

    /// Names that only look like those: fsck accepts them, so Truce must too.
    static let lookalikesGitAccepts = [
        ".gitx", "x.git", "git", "git~2", "git~10", ".gi t", ".g\u{301}it", "..git", ".git-x", "gitmodules", ".gitignore",
        ".mailmap", "gitmod~5", "gi7eba~1x", ".gitattribute", "a\\b",
    ]

    @Test(arguments: spellingsGitRejects)
    func aSpellingGitFsckRejectsIsARefusedKey(name: String) throws {
        #expect(try fsckAcceptsTree(named: name) == false, "git fsck accepts a tree entry named \(name.debugDescription)")
        #expect(throws: TruceError.self) { try DocumentKey(name) }
        #expect(throws: TruceError.self) { try DocumentKey("dir/" + name + "/file.txt") }
    }

    @Test(arguments: lookalikesGitAccepts)
    func aLookalikeGitFsckAcceptsIsAValidKey(name: String) throws {
        #expect(try fsckAcceptsTree(named: name), "git fsck rejects a tree entry named \(name.debugDescription)")
        #expect(try DocumentKey("dir/" + name).rawValue == "dir/" + name)
    }

    /// Property over 2,400 generated keys: an accepted key saves, leaves `git fsck --strict` clean and reads back
    /// byte for byte (one batch, one fsck, one `git cat-file --batch`); a refused key is bad input and, through the
    /// CLI, exits 2 and writes nothing.
    @Test func generatedKeysAreEitherStoredCleanlyOrRefusedWithoutAWrite() throws {
        var random = SeededRandom(seed: 11_005)
        var seen = Set<DocumentKey>()
        var accepted: [(key: DocumentKey, content: Data)] = []
        var refused: [String] = []
        for index in 0..<2_400 {
            let text = Self.generatedKey(&random)
            do {
                let key = try DocumentKey(text)
                if seen.insert(key).inserted { accepted.append((key, Self.generatedContent(&random, index: index))) }
            } catch {
                refused.append(text)
            }
        }
        // Neither side may be vacuous.
        #expect(accepted.count > 600, "only \(accepted.count) generated keys were accepted")
        #expect(refused.count > 600, "only \(refused.count) generated keys were refused")

        let test = try TestStore()
        let ids = try test.store.saveBatch(accepted.map { BatchSave(key: $0.key, content: $0.content, device: "fuzz") })
        let fsck = try git(["-C", test.path, "fsck", "--strict", "--no-dangling"])
        #expect(fsck.status == 0, "fsck: \(fsck.errorLines.prefix(5))")

        let requests = zip(ids, accepted).map { "\($0.hex):\($1.key.rawValue)\n" }.joined()
        let batch = try git(["-C", test.path, "cat-file", "--batch"], input: Data(requests.utf8))
        var answers = batch.stdout[...]
        for (key, content) in accepted {
            let header = try #require(answers.firstIndex(of: UInt8(ascii: "\n")), "no answer for \(key.rawValue.debugDescription)")
            let fields = String(decoding: answers[..<header], as: UTF8.self).split(separator: " ")
            try #require(fields.count == 3 && fields[1] == "blob", "git cannot find \(key.rawValue.debugDescription): \(fields)")
            let size = try #require(Int(fields[2]))
            let body = answers.index(after: header)
            #expect(Data(answers[body..<body + size]) == content, "\(key.rawValue.debugDescription) reads back different bytes")
            answers = answers[(body + size + 1)...]
        }

        // Through the command line: a sample of refused keys exits 2 with one line and leaves every byte of the store.
        let file = test.directory.write(.text("content\n"), to: "input")
        let before = snapshot(ofStore: test.path)
        for text in stride(from: 0, to: refused.count, by: max(1, refused.count / 30)).map({ refused[$0] }) {
            let result = try truce(["save", text, file], store: test.path)
            #expect(result.status == 2, "\(text.debugDescription): \(result.errorOutput)")
            #expect(result.errorLines.count == 1 && result.errorLines[0].hasPrefix("truce: "), "\(text.debugDescription): \(result.errorOutput)")
        }
        #expect(snapshot(ofStore: test.path) == before)
    }

    // MARK: - Generators

    static let pieces = [
        "a", "Z", "0", "\u{E9}", "e\u{301}", "\u{301}", "\u{308}", "\u{200C}", "\u{200D}", "\u{200E}", "\u{202E}", "\u{206A}",
        "\u{FEFF}", "\u{1F600}", "\u{6587}", "~", "1", "4", "9", " ", ".", "..", ":", "\\", "git", "GIT", "Git", "gitmodules",
        "gitattributes", "gi7eba", "gi7d29", "GITMOD", "gitatt", ".git", "git~1", "GIT~1", "gitmod~1", "\u{7}", "\u{1B}", "\u{85}",
        "\u{2028}", "-", "*", "[", "$(x)", ";", "'",
    ]
    static let reserved = [".git", ".gitmodules", ".gitattributes", "git~1", "gitmod~1", "gi7eba~2", "gitatt~1", "gi7d29~3"]
    static let ignorable = ["\u{200C}", "\u{200D}", "\u{200F}", "\u{202A}", "\u{206F}", "\u{FEFF}"]

    static func generatedKey(_ random: inout SeededRandom) -> String {
        var segments: [String] = []
        for _ in 0..<random.int(1...4) {
            if random.chance(3) {
                segments.append(String(repeating: "x", count: random.int(200...700)))
            } else if random.chance(25) {
                segments.append(reservedSpelling(&random))
            } else {
                segments.append((0..<random.int(1...6)).map { _ in random.pick(pieces) }.joined())
            }
        }
        var key = segments.joined(separator: "/")
        if random.chance(3) { key = "/" + key }
        if random.chance(3) { key += "/" }
        return key
    }

    /// One of git's reserved names, with HFS-ignorable code points slipped in, its ASCII case changed, NTFS's
    /// trailing dots and spaces or a stream or backslash part added, or a near miss.
    static func reservedSpelling(_ random: inout SeededRandom) -> String {
        var scalars = Array(random.pick(reserved).unicodeScalars).map { scalar in
            random.chance(30) && scalar.properties.isLowercase ? Character(scalar).uppercased() : String(scalar)
        }
        for _ in 0..<random.int(0...2) { scalars.insert(random.pick(ignorable), at: random.int(0...scalars.count)) }
        var name = scalars.joined()
        name += random.pick(["", "", ".", " ", ". .", ":x", "\\y", "x", "~", "s"])
        if random.chance(15) { name = random.pick(["x\\", "a\\b\\", "y"]) + name }
        return name
    }

    /// Text, a line too long for a `.gitattributes`, a `.gitmodules` fsck rejects, or binary bytes: content that would
    /// make fsck fail if a reserved name slipped through.
    static func generatedContent(_ random: inout SeededRandom, index: Int) -> Data {
        switch random.int(0...3) {
        case 0: return Data("key \(index)\n".utf8)
        case 1: return Data((String(repeating: "* merge=", count: 400) + "\n").utf8)
        case 2: return Data("[submodule \"x\"]\n\tpath = x\n\turl = --upload-pack=touch /tmp/pwned\n".utf8)
        default: return Data((0..<random.int(1...64)).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        }
    }

    /// A blob fsck rejects as a `.gitmodules` (an option for a URL) and as a `.gitattributes` (a 3,000-byte line).
    static let hostileContent = Data(
        ("[submodule \"x\"]\n\tpath = x\n\turl = --upload-pack=touch /tmp/pwned\n#"
            + String(repeating: "x", count: 3_000) + "\n").utf8)

    /// True when `git fsck --strict` accepts a repository holding one tree with `hostileContent` named `name`.
    func fsckAcceptsTree(named name: String) throws -> Bool {
        let directory = TemporaryDirectory("truce-fsck-oracle")
        let repository = directory.file("repo.git")
        #expect(try git("init", "-q", "--bare", repository).status == 0)
        let blob = try git(["-C", repository, "hash-object", "-w", "--stdin"], input: Self.hostileContent).output
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let tree = try git(["-C", repository, "mktree"], input: Data("100644 blob \(blob)\t\(name)\n".utf8))
        try #require(tree.status == 0, "git mktree: \(tree.errorOutput)")
        return try git(["-C", repository, "fsck", "--strict"]).status == 0
    }
}
