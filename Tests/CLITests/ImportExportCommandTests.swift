import Foundation
import TestSupport
import Testing

/// `truce import` and `truce export` on real folders, as a user runs them.
@Suite(.timeLimit(.minutes(10))) struct ImportExportCommandTests {
    @Test func importPrintsASummaryRefusesBadFilesOneLineEachAndImportsTheRest() throws {
        let store = try CLIStore()
        let folder = TemporaryDirectory("truce-import")
        folder.write(.text("one\n"), to: "a.txt")
        try FileManager.default.createDirectory(atPath: folder.file("sub/.git"), withIntermediateDirectories: true)
        folder.write(.text("two\n"), to: "sub/b.txt")
        folder.write(.text("[core]\n"), to: "sub/.git/config")
        try FileManager.default.createSymbolicLink(atPath: folder.file("escape"), withDestinationPath: "/etc/passwd")
        folder.createEmptyFile(named: [0x62, 0x61, 0x64, 0xFF])
        folder.createEmptyFile(named: Array("new\nline".utf8))

        let first = try store.run("import", folder.path, "--device", "laptop")
        #expect(first.status == 2, "anything refused is bad input")
        #expect(first.output == "imported 2 documents: 2 new versions, 0 unchanged, 3 refused\n")
        #expect(
            first.errorLines == [
                "truce: note: skipped 'sub/.git': a git folder; its files are git's, not documents",
                "truce: refused 'bad\\xFF': its name is not valid UTF-8, so it cannot be a document key",
                "truce: refused 'escape': it is a symbolic link (not followed)",
                "truce: refused 'new\\x0Aline': its name is not a valid document key: it contains a NUL or control character",
            ])
        #expect(!first.errorOutput.contains("\r"), "no progress line when stderr is not a terminal")
        #expect(try store.run("cat", "sub/b.txt").output == "two\n")
        #expect(try store.run("cat", "escape").status == 2, "a link is never imported")

        folder.write(.text("two, edited\n"), to: "sub/b.txt")
        let rerun = try store.run("import", folder.path, "--device", "laptop", "--json")
        #expect(rerun.status == 2)
        let again = try #require(JSONSerialization.jsonObject(with: rerun.stdout) as? [String: Any])
        #expect(again["documents"] as? Int == 2)
        #expect(again["newVersions"] as? Int == 1)
        #expect(again["unchanged"] as? Int == 1)
        let refused = try #require(again["refused"] as? [[String: String]])
        #expect(refused.map { $0["path"] } == ["bad\\xFF", "escape", "new\\x0Aline"])
        #expect(refused.allSatisfy { $0["reason"]?.isEmpty == false })
        let fsck = try git("-C", store.path, "fsck", "--strict", "--no-dangling")
        #expect(fsck.status == 0 && fsck.output.isEmpty, "\(fsck.output)")
    }

    @Test func aCleanImportExitsZeroAndAPrefixPlacesTheKeys() throws {
        let store = try CLIStore()
        let folder = TemporaryDirectory("truce-import")
        folder.write(.text("x"), to: "x.txt")
        let result = try store.run("import", folder.path, "--prefix", "inbox/", "--device", "laptop", "--date", "2026-11-30T20:15:00Z")
        #expect(result.status == 0)
        #expect(result.output == "imported 1 document: 1 new version, 0 unchanged, 0 refused\n")
        #expect(try git("-C", store.path, "log", "--glob=refs/truce/heads/*", "--format=%an %aI").output == "laptop 2026-11-30T20:15:00+00:00\n")
        #expect(try store.run("cat", "inbox/x.txt").output == "x")
    }

    /// Root reads a mode-000 file, so the import runs without the capabilities that let it (setpriv from util-linux).
    @Test func anUnreadableFileOrFolderIsRefusedAndTheRestImported() throws {
        let store = try CLIStore()
        let folder = TemporaryDirectory("truce-import")
        folder.write(.text("fine"), to: "fine.txt")
        chmod(folder.write(.text("secret"), to: "locked.txt"), 0)
        try FileManager.default.createDirectory(atPath: folder.file("closed"), withIntermediateDirectories: true)
        folder.write(.text("inside"), to: "closed/inner.txt")
        chmod(folder.file("closed"), 0)
        defer { chmod(folder.file("closed"), 0o755) }
        let withoutOverride = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"]
        let probe = try TestSupport.run("/usr/bin/env", withoutOverride + ["cat", folder.file("locked.txt")])
        try #require(probe.status != 0, "the test needs a process that cannot read mode-000 files; cat read it")

        let result = try TestSupport.run(
            "/usr/bin/env", withoutOverride + [truceExecutable, "--store", store.path, "import", folder.path, "--device", "laptop"])
        #expect(result.status == 2)
        #expect(result.output == "imported 1 document: 1 new version, 0 unchanged, 2 refused\n")
        #expect(
            result.errorLines == [
                "truce: refused 'closed': cannot read this folder: permission denied",
                "truce: refused 'locked.txt': cannot read it: permission denied",
            ])
        #expect(try store.run("cat", "fine.txt").output == "fine")
    }

    @Test func aMissingFolderIsBadInputAndWritesNothing() throws {
        let store = try CLIStore()
        let before = snapshot(ofStore: store.path)
        let result = try store.run("import", store.directory.file("missing"))
        #expect(result.status == 2)
        #expect(result.errorLines == ["truce: cannot use folder '\(store.directory.file("missing"))': it does not exist"])
        #expect(snapshot(ofStore: store.path) == before)
    }

    @Test func importFromStandardInputReadsTheStreamFormat() throws {
        let store = try CLIStore()
        let stream = Data("M 100644 inline notes/a.md\ndata 6\nhello\n\nM 100644 inline notes/b.bin\ndata 3\n".utf8) + Data([0, 0xFF, 0x0A])
        let result = try store.run("import", "-", "--device", "script", input: stream)
        #expect(result.status == 0, "\(result.errorOutput)")
        #expect(result.output == "imported 2 documents: 2 new versions, 0 unchanged, 0 refused\n")
        #expect(try store.run("cat", "notes/b.bin").stdout == Data([0, 0xFF, 0x0A]))

        let before = snapshot(ofStore: store.path)
        let broken = try store.run("import", "-", input: .text("M 100644 inline c.md\ndata 99\nshort\n"))
        #expect(broken.status == 2)
        #expect(broken.errorLines == ["truce: malformed import stream at line 2: the stream ends 93 bytes before the 99 bytes announced"])
        #expect(snapshot(ofStore: store.path) == before)
    }

    @Test func exportListsConflictsExitsOneAndRefusesANonEmptyFolderUnlessForced() throws {
        let store = try CLIStore()
        let base = try store.save("c.txt", "base\n", "--date", "2026-11-30T10:00:00Z")
        try store.save("c.txt", "laptop\n", "--base", base, "--date", "2026-11-30T11:00:00Z")
        try store.save("c.txt", "phone\n", "--base", base, "--date", "2026-11-30T12:00:00Z")
        try store.save("gone.txt", "gone\n")
        #expect(try store.run("delete", "gone.txt").status == 0)
        try store.save("a.txt", "a\n")
        let out = store.directory.file("out")

        let result = try store.run("export", out)
        #expect(result.status == 1, "a person is needed for the conflict")
        #expect(result.errorLines == ["truce: in conflict, written as its current version: c.txt"])
        #expect(result.output == "exported 2 documents to \(out); 1 deleted, not written\n")
        #expect(try String(contentsOfFile: out + "/c.txt", encoding: .utf8) == "phone\n")
        #expect(!FileManager.default.fileExists(atPath: out + "/gone.txt"))

        try "kept".write(toFile: out + "/a.txt", atomically: false, encoding: .utf8)
        let refused = try store.run("export", out)
        #expect(refused.status == 2)
        #expect(refused.errorLines.count == 1)
        #expect(refused.errorLines.first?.contains("it is not empty") == true, "\(refused.errorOutput)")
        #expect(try String(contentsOfFile: out + "/a.txt", encoding: .utf8) == "kept")

        let forced = try store.run("export", out, "--force", "--json")
        #expect(forced.status == 1)
        let report = try #require(JSONSerialization.jsonObject(with: forced.stdout) as? [String: Any])
        #expect(report["written"] as? Int == 2)
        #expect(report["inConflict"] as? [String] == ["c.txt"])
        #expect(try String(contentsOfFile: out + "/a.txt", encoding: .utf8) == "a\n")

        let earlier = try store.run("export", store.directory.file("then"), "--version-at", "2026-11-30T11:30:00Z")
        #expect(earlier.status == 0, "no conflict yet at 11:30: \(earlier.errorOutput)")
        #expect(try String(contentsOfFile: store.directory.file("then/c.txt"), encoding: .utf8) == "laptop\n")
    }

    @Test func aFolderImportedAndExportedIsIdenticalUnderDiff() throws {
        let store = try CLIStore()
        let folder = TemporaryDirectory("truce-roundtrip")
        try FileManager.default.createDirectory(atPath: folder.file("a/b/c"), withIntermediateDirectories: true)
        folder.write(Data(), to: "empty.txt")
        folder.write(.text("last line without newline"), to: "a/no-newline.md")
        folder.write(Data((0...255).map(UInt8.init).reversed()), to: "a/b/binary.dat")
        folder.write(.text("ünïcödé\n"), to: "a/b/c/Ünïcödé ✓.txt")
        folder.write(.text(" spaced \n"), to: " leading space.txt")
        #expect(try store.run("import", folder.path).status == 0)
        let out = store.directory.file("out")
        let export = try store.run("export", out)
        #expect(export.status == 0, "\(export.errorOutput)")
        let diff = try TestSupport.run("/usr/bin/env", ["diff", "-r", folder.path, out])
        #expect(diff.status == 0, "diff -r: \(diff.output)")
    }
}
