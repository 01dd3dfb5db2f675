import Foundation
import TestSupport
import Testing

@testable import TruceCore

/// Keys, trailers and device names are bytes, as git sees them: never split at grapheme boundaries, never
/// compared by canonical equivalence.
@Suite(.timeLimit(.minutes(10))) struct KeyBytesTests {
    @Test(arguments: [
        "\u{200C}.md", "\u{200D}x", "\u{0301}accent.txt", "\u{FE0F}", "dir/\u{0301}name.txt", "a/\u{200C}/b",
        ": \u{0301}colon", "\u{0301}/\u{0301}",
    ])
    func aKeyStartingASegmentWithAMarkOrJoinerReadsBackAndKeepsTheJournalReadable(key: String) throws {
        let test = try TestStore()
        let documentKey = try DocumentKey(key)
        let saved = try test.store.save(.text("mark\n"), to: documentKey, device: "laptop")
        #expect(try test.store.contents(of: documentKey) == .text("mark\n"))
        #expect(try test.store.versions(of: documentKey).current?.id == saved.id)
        #expect(try test.store.history(of: documentKey).map(\.id) == [saved.id])
        #expect(try test.store.documents() == [documentKey])
        let changes = try test.store.changes().changes
        #expect(changes.count == 1)
        #expect(changes.first.map { Array($0.key.rawValue.utf8) } == Array(key.utf8))
        // The tree holds the key's bytes at exactly the path git would use: each byte '/' is a directory.
        let paths = try test.git("ls-tree", "-r", "-z", "--name-only", saved.id.hex).split(separator: "\0").map { Array($0.utf8) }
        #expect(paths == [Array(key.utf8)])
        #expect(try test.git("cat-file", "-p", "\(saved.id.hex):\(key)") == "mark\n")
        #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)
    }

    @Test func trailersAreReadByBytesWhenTheKeyStartsWithACombiningMark() {
        let message = VersionMessage(kind: .save, key: "\u{0301}x", device: "\u{0301}device")
        let parsed = VersionMessage(parsing: message.text)
        #expect(parsed.map { Array($0.key.utf8) } == Array("\u{0301}x".utf8))
        #expect(parsed.map { Array($0.device.utf8) } == Array("\u{0301}device".utf8))
    }

    static let nfc = "caf\u{E9}.txt", nfd = "cafe\u{301}.txt"

    @Test func nfcAndNfdSpellingsAreTwoDocuments() throws {
        let test = try TestStore()
        let composed = try DocumentKey(Self.nfc), decomposed = try DocumentKey(Self.nfd)
        #expect(composed != decomposed)
        #expect(Set([composed, decomposed]).count == 2)
        try test.store.save(.text("composed\n"), to: composed, device: "laptop")
        try test.store.save(.text("decomposed\n"), to: decomposed, device: "laptop")
        #expect(try test.store.contents(of: composed) == .text("composed\n"))
        #expect(try test.store.contents(of: decomposed) == .text("decomposed\n"))
        #expect(try test.store.documents().count == 2)
        #expect(try test.store.changes().changes.map { Array($0.key.rawValue.utf8) } == [Array(Self.nfc.utf8), Array(Self.nfd.utf8)])
    }

    @Test func aVersionOfTheNfcSpellingIsNoBaseForTheNfdOne() throws {
        let test = try TestStore()
        let composed = try test.store.save(.text("composed\n"), to: DocumentKey(Self.nfc), device: "laptop")
        try test.store.save(.text("decomposed\n"), to: DocumentKey(Self.nfd), device: "laptop")
        let before = snapshot(ofStore: test.path)
        #expect {
            try test.store.save(.text("x\n"), to: DocumentKey(Self.nfd), device: "laptop", base: composed.id)
        } throws: { error in
            guard case .versionOfAnotherDocument(let id, _, let actual)? = error as? TruceError else { return false }
            return id == composed.id && Array(actual.utf8) == Array(Self.nfc.utf8)
        }
        #expect(snapshot(ofStore: test.path) == before)
    }

    @Test func excludingAnAuthorComparesItsBytes() throws {
        let test = try TestStore()
        try test.store.save(.text("1\n"), to: "a.txt", device: "Ren\u{E9}")
        try test.store.save(.text("2\n"), to: "a.txt", device: "Rene\u{301}")
        let kept = try test.store.changes(excludingAuthor: "Ren\u{E9}").changes
        #expect(kept.map { Array($0.author.utf8) } == [Array("Rene\u{301}".utf8)])
    }

    @Test func aDeviceNameWithAMarkAfterLessThanIsBadInput() throws {
        let test = try TestStore()
        let before = snapshot(ofStore: test.path)
        #expect(throws: TruceError.invalidDeviceName("x <\u{301}y", reason: "git forbids '<' and '>' in author names")) {
            try test.store.save(.text("x"), to: "a.txt", device: "x <\u{301}y")
        }
        #expect(snapshot(ofStore: test.path) == before)
    }

    @Test func extensionsAreTheBytesAfterTheLastDotOfTheFileName() throws {
        #expect(try DocumentKey("dir.json/notes.JSON").fileExtension == "json")
        #expect(try DocumentKey("dir.json/notes").fileExtension == "")
        #expect(try DocumentKey("a.\u{301}json").fileExtension == "\u{301}json")
    }
}

/// A store written before a spelling was reserved keeps a readable journal.
@Suite(.timeLimit(.minutes(10))) struct LegacyKeyTests {
    @Test func aJournalEntryForAKeyNowReservedDoesNotBreakTheJournal() throws {
        let test = try TestStore()
        let saved = try test.store.save(.text("x\n"), to: "a.txt", device: "laptop")
        let tip = try test.git("rev-parse", "refs/truce/journal").trimmingCharacters(in: .whitespacesAndNewlines)
        let emptyTree = try test.git("hash-object", "-t", "tree", "-w", "/dev/null").trimmingCharacters(in: .whitespacesAndNewlines)
        let legacy = ".gi\u{200C}t"
        let message = "save \(legacy)\n\nChange: save\nDocument: \(legacy)\nVersion: \(saved.id.hex)\nDevice: old\n"
        let entry = try run(
            "/usr/bin/env", ["git", "-C", test.path, "commit-tree", emptyTree, "-p", tip], input: .text(message),
            environment: [
                "GIT_AUTHOR_NAME": "old", "GIT_AUTHOR_EMAIL": "o@x", "GIT_COMMITTER_NAME": "old",
                "GIT_COMMITTER_EMAIL": "o@x",
            ])
        try #require(entry.status == 0, "\(entry.errorOutput)")
        _ = try test.git("update-ref", "refs/truce/journal", entry.output.trimmingCharacters(in: .whitespacesAndNewlines))
        let changes = try test.store.changes().changes
        #expect(changes.map { Array($0.key.rawValue.utf8) } == [Array("a.txt".utf8), Array(legacy.utf8)])
    }
}
