import Foundation
import TestSupport
import Testing
import Truce

/// Command-line words are bytes: text words must be UTF-8 (never silently replaced), file names may be any bytes,
/// and keys that differ only by Unicode normalization are two documents everywhere, down to `resolve --all`.
@Suite(.timeLimit(.minutes(10))) struct ArgumentBytesTests {
    /// Runs `truce --store STORE` with `words`, where `\ooo` octal escapes become raw bytes (through printf in sh).
    func truceWithRawBytes(_ words: [String], store: String) throws -> ProcessResult {
        try run("/bin/sh", ["-c", "exec \"$0\" --store \"$1\" " + Self.shellWords(words), truceExecutable, store])
    }

    /// `words` for sh: those with a `\ooo` escape through printf, the others single-quoted as they are.
    static func shellWords(_ words: [String]) -> String {
        words.map { $0.contains("\\") ? "\"$(printf '\($0)')\"" : "'\($0)'" }.joined(separator: " ")
    }

    @Test func aKeyArgumentThatIsNotUTF8IsRefusedInsteadOfReplaced() throws {
        let store = try CLIStore()
        let file = store.directory.write(.text("x\n"), to: "input")
        let before = snapshot(ofStore: store.path)
        for key in [#"\377.md"#, #"\376.md"#, #"dir/\300\257.md"#] {
            let result = try truceWithRawBytes(["save", key, file], store: store.path)
            #expect(result.status == 2, "\(key): \(result.errorOutput)")
            #expect(result.errorLines.count == 1)
            #expect(
                result.errorLines.first?.contains("argument 1") == true && result.errorOutput.contains("not valid UTF-8"),
                "\(key): \(result.errorOutput)")
        }
        let device = try truceWithRawBytes(["save", "a.txt", file, "--device", #"lap\377top"#], store: store.path)
        #expect(device.status == 2)
        #expect(device.errorOutput.contains("the value of '--device'"), "\(device.errorOutput)")
        #expect(snapshot(ofStore: store.path) == before)
    }

    @Test func aFileWhoseNameIsNotUTF8IsRead() throws {
        let store = try CLIStore()
        let directory = store.directory.path
        // The name's bytes are 0xFF '.' 't' 'x' 't': only the shell can make it, Foundation names are UTF-8.
        let made = try run("/bin/sh", ["-c", #"printf 'raw bytes\n' > "$0/$(printf '\377.txt')""#, directory])
        try #require(made.status == 0, "\(made.errorOutput)")
        let saved = try truceWithRawBytes(["save", "a.txt", directory + #"/\377.txt"#], store: store.path)
        #expect(saved.status == 0, "\(saved.errorOutput)")
        #expect(try store.run("cat", "a.txt").output == "raw bytes\n")

        // merge-file reads such names too, and prints what git prints for them.
        let args = ["-L", "current", "-L", "base", "-L", "other"] + Array(repeating: directory + #"/\377.txt"#, count: 3)
        let merged = try truceWithRawBytes(["merge-file", "-p"] + args, store: store.path)
        let script = "exec git merge-file -p " + Self.shellWords(args)
        let oracle = try run("/bin/sh", ["-c", script])
        #expect(merged.status == 0 && oracle.status == 0, "\(merged.errorOutput) \(oracle.errorOutput)")
        #expect(merged.stdout == oracle.stdout)
    }

    static let nfc = "caf\u{E9}.txt", nfd = "cafe\u{301}.txt"
    static let base = "one\ntwo\nthree\n"

    @Test func nfcAndNfdSpellingsAreResolvedAndReportedAsTwoDocuments() throws {
        let test = try TestStore()
        for key in [Self.nfc, Self.nfd] {
            try test.makeConflict(
                DocumentKey(key), base: .text(Self.base),
                heads: [
                    ("laptop", .text("ONE\ntwo\nthree\n")), ("phone", .text("one\ntwo\nTHREE\n")),
                ])
        }
        let result = try truce(["resolve", "--all", "--json"], store: test.path)
        #expect(result.status == 0, "\(result.errorOutput)")
        let reports = try #require(JSONSerialization.jsonObject(with: result.stdout) as? [[String: Any]], "\(result.output)")
        let documents = reports.compactMap { $0["document"] as? String }.map { Array($0.utf8) }
        #expect(
            documents.sorted { $0.lexicographicallyPrecedes($1) }
                == [Array(Self.nfd.utf8), Array(Self.nfc.utf8)].sorted { $0.lexicographicallyPrecedes($1) })
        #expect(reports.allSatisfy { $0["outcome"] as? String == "resolved" })
        for key in [Self.nfc, Self.nfd] {
            #expect(try test.store.state(of: DocumentKey(key)) == .settled)
            #expect(try test.store.contents(of: DocumentKey(key)) == .text("ONE\ntwo\nTHREE\n"))
        }
        #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)
    }

    @Test func aVersionOfTheNfcSpellingIsRefusedAsBaseOfTheNfdOne() throws {
        let store = try CLIStore()
        let composed = try store.save(Self.nfc, "composed\n")
        try store.save(Self.nfd, "decomposed\n")
        let before = snapshot(ofStore: store.path)
        let result = try store.run("save", Self.nfd, "-", "--base", composed, input: .text("x\n"))
        #expect(result.status == 2)
        #expect(result.errorOutput.contains("belongs to"), "\(result.errorOutput)")
        #expect(snapshot(ofStore: store.path) == before)
    }
}
