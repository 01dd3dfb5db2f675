import Foundation
import TestSupport
import Testing
import TruceCore

/// `importDocuments` and `exportDocuments` on real folders and real stores.
@Suite(.timeLimit(.minutes(10))) struct ImportExportTests {
    let start = Date(timeIntervalSince1970: 1_796_000_000)

    @Test func importingAgainWritesVersionsOnlyForFilesThatChanged() async throws {
        let test = try TestStore()
        let folder = TemporaryDirectory("truce-import")
        folder.write(.text("one\n"), to: "a.txt")
        try FileManager.default.createDirectory(atPath: folder.file("notes"), withIntermediateDirectories: true)
        folder.write(.text("two"), to: "notes/b.md")
        folder.write(Data(), to: "notes/empty")

        let first = try await test.store.importDocuments(.folder(at: folder.path), device: "laptop", date: start)
        #expect((first.documents, first.newVersions, first.unchanged) == (3, 3, 0))
        #expect(first.versions.map(\.key) == ["a.txt", "notes/b.md", "notes/empty"])
        #expect(try test.git("show", "\(first.versions[1].version.hex):notes/b.md") == "two")
        #expect(try test.store.contents(of: "notes/empty") == Data())

        let untouched = snapshot(ofStore: test.path)
        let again = try await test.store.importDocuments(.folder(at: folder.path), device: "laptop", date: start)
        #expect((again.documents, again.newVersions, again.unchanged) == (3, 0, 3))
        #expect(snapshot(ofStore: test.path) == untouched, "an import of unchanged files must write nothing")

        folder.write(.text("two, edited"), to: "notes/b.md")
        let edited = try await test.store.importDocuments(.folder(at: folder.path), device: "phone", date: start.addingTimeInterval(60))
        #expect((edited.newVersions, edited.unchanged) == (1, 2))
        let history = try test.store.history(of: "notes/b.md")
        #expect(history.map(\.id) == [edited.versions[0].version, first.versions[1].version], "the new version is based on the current one")
        #expect(history[0].deviceName == "phone")
        #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)
    }

    @Test func aDeletedDocumentComesBackWhenImportedWithItsOldBytes() async throws {
        let test = try TestStore()
        try test.store.save(.text("kept\n"), to: "a.txt", device: "laptop")
        try test.store.delete("a.txt", device: "laptop")
        let folder = TemporaryDirectory("truce-import")
        folder.write(.text("kept\n"), to: "a.txt")
        let report = try await test.store.importDocuments(.folder(at: folder.path), device: "laptop")
        #expect(report.newVersions == 1)
        #expect(try test.store.state(of: "a.txt") == .settled)
    }

    @Test func aPrefixPutsEveryKeyUnderAFolder() async throws {
        let test = try TestStore()
        let folder = TemporaryDirectory("truce-import")
        folder.write(.text("x"), to: "a.txt")
        let report = try await test.store.importDocuments(.folder(at: folder.path, prefix: "archive/2026"), device: "laptop")
        #expect(report.versions.map(\.key) == ["archive/2026/a.txt"])
        #expect(throws: TruceError.invalidKey("../up", reason: "it has a '..' segment")) {
            try ImportSource.folder(at: folder.path, prefix: "../up/")
        }
    }

    @Test func aFileThatVanishesAfterTheListingIsRefusedAndTheRestImported() async throws {
        let test = try TestStore()
        let folder = TemporaryDirectory("truce-import")
        folder.write(.text("stays"), to: "a.txt")
        folder.write(.text("goes"), to: "b.txt")
        let source = try ImportSource.folder(at: folder.path)
        #expect(source.entries.map(\.key) == ["a.txt", "b.txt"])
        try FileManager.default.removeItem(atPath: folder.file("b.txt"))

        let report = try await test.store.importDocuments(source, device: "laptop")
        #expect(report.refused == [ImportReport.PathIssue(path: "b.txt", reason: "cannot read it: it vanished (no such file)")])
        #expect((report.documents, report.newVersions) == (1, 1))
        #expect(try test.store.documents() == ["a.txt"])
    }

    @Test func aLinkSwappedInAfterTheListingIsNotFollowed() async throws {
        let test = try TestStore()
        let folder = TemporaryDirectory("truce-import")
        let outside = TemporaryDirectory("truce-outside")
        outside.write(.text("secret"), to: "secret.txt")
        folder.write(.text("plain"), to: "file.txt")
        try FileManager.default.createDirectory(atPath: folder.file("sub"), withIntermediateDirectories: true)
        folder.write(.text("inner"), to: "sub/inner.txt")
        let source = try ImportSource.folder(at: folder.path)
        #expect(source.entries.map(\.key) == ["file.txt", "sub/inner.txt"])
        // Both the file and a folder on the way become links out of the folder.
        try FileManager.default.removeItem(atPath: folder.file("file.txt"))
        try FileManager.default.createSymbolicLink(atPath: folder.file("file.txt"), withDestinationPath: outside.file("secret.txt"))
        try FileManager.default.removeItem(atPath: folder.file("sub"))
        try FileManager.default.createSymbolicLink(atPath: folder.file("sub"), withDestinationPath: outside.path)
        outside.write(.text("secret too"), to: "inner.txt")

        let report = try await test.store.importDocuments(source, device: "laptop")
        #expect(
            report.refused == [
                ImportReport.PathIssue(path: "file.txt", reason: "cannot read it: it is a symbolic link (not followed)"),
                ImportReport.PathIssue(path: "sub/inner.txt", reason: "cannot read it: 'sub' on its path is a symbolic link (not followed)"),
            ])
        #expect(try test.store.documents().isEmpty)
    }

    @Test func theListingRefusesLinksSpecialFilesAndBadNamesAndSkipsGit() async throws {
        let folder = TemporaryDirectory("truce-import")
        folder.write(.text("ok"), to: "ok.txt")
        try FileManager.default.createSymbolicLink(atPath: folder.file("link"), withDestinationPath: "/etc/passwd")
        #expect(mkfifo(folder.file("pipe"), 0o644) == 0)
        try FileManager.default.createDirectory(atPath: folder.file(".git"), withIntermediateDirectories: true)
        folder.write(.text("[core]\n"), to: ".git/config")
        folder.createEmptyFile(named: Array("tab\there".utf8))
        folder.createEmptyFile(named: [0x6C, 0x61, 0x74, 0x69, 0x6E, 0x31, 0xE9])  // "latin1é" in Latin-1

        let source = try ImportSource.folder(at: folder.path)
        #expect(source.entries.map(\.key) == ["ok.txt"])
        #expect(source.skipped.map(\.path) == [".git"])
        #expect(
            source.refused == [
                ImportReport.PathIssue(path: "latin1\\xE9", reason: "its name is not valid UTF-8, so it cannot be a document key"),
                ImportReport.PathIssue(path: "link", reason: "it is a symbolic link (not followed)"),
                ImportReport.PathIssue(path: "pipe", reason: "it is a named pipe, not a regular file"),
                ImportReport.PathIssue(path: "tab\\x09here", reason: "its name is not a valid document key: it contains a NUL or control character"),
            ])
    }

    @Test func theStoreInsideTheFolderIsSkipped() async throws {
        let folder = TemporaryDirectory("truce-import")
        let store = try DocumentStore.create(at: folder.file(".truce"))
        folder.write(.text("doc"), to: "doc.txt")
        let source = try ImportSource.folder(at: folder.path, excluding: store.path)
        #expect(source.entries.map(\.key) == ["doc.txt"])
        #expect(source.skipped == [ImportReport.PathIssue(path: ".truce", reason: "it is the store itself")])
        #expect(throws: TruceError.invalidFolder(store.path + "/objects", reason: "it is the store or inside it")) {
            try ImportSource.folder(at: store.path + "/objects", excluding: store.path)
        }
    }

    @Test func aFolderThatIsMissingOrAFileIsBadInput() async throws {
        let folder = TemporaryDirectory("truce-import")
        folder.write(.text("x"), to: "file")
        #expect(throws: TruceError.invalidFolder(folder.file("missing"), reason: "it does not exist")) {
            try ImportSource.folder(at: folder.file("missing"))
        }
        #expect(throws: TruceError.invalidFolder(folder.file("file"), reason: "it is not a folder")) {
            try ImportSource.folder(at: folder.file("file"))
        }
    }

    // MARK: - The stream

    @Test func aStreamSavesEachRecordByteForByteAndTheLastRecordOfAPathWins() async throws {
        let test = try TestStore()
        var stream = Data("# made by a script\nM 100644 inline notes/a.md\ndata 5\nfirst\n\nM 100644 inline bin\ndata 22\n".utf8)
        // Bytes that look like a record header inside the data must stay data.
        stream.append(Data([0, 1, 0xFF]) + Data("\nM 100644 inline x\n".utf8))
        stream.append(Data("M 100644 inline empty\ndata 0\nM 100644 inline notes/a.md\ndata 6\nsecond".utf8))
        let source = try ImportSource.stream(stream)
        #expect(source.entries.map(\.key) == ["notes/a.md", "bin", "empty"])
        let report = try await test.store.importDocuments(source, device: "script")
        #expect(report.newVersions == 3)
        #expect(try test.store.contents(of: "notes/a.md") == .text("second"))
        #expect(try test.store.contents(of: "bin") == Data([0, 1, 0xFF]) + Data("\nM 100644 inline x\n".utf8))
        #expect(try test.store.contents(of: "empty") == Data())
        #expect(try test.store.history(of: "notes/a.md").count == 1)
    }

    @Test func aStreamPathThatIsNotAKeyIsRefusedByName() async throws {
        let stream = Data("M 100644 inline ../escape\ndata 1\nx\nM 100644 inline fine\ndata 1\ny\n".utf8)
        let source = try ImportSource.stream(stream)
        #expect(source.entries.map(\.key) == ["fine"])
        #expect(source.refused == [ImportReport.PathIssue(path: "../escape", reason: "its name is not a valid document key: it has a '..' segment")])
    }

    @Test(arguments: [
        ("M 100755 inline a\ndata 1\nx\n", 1, "expected 'M 100644 inline PATH'"),
        ("M 100644 inline a\nx\n", 2, "expected 'data LENGTH'"),
        ("M 100644 inline a\ndata -1\n", 2, "expected 'data LENGTH'"),
        ("M 100644 inline a\ndata 10\nshort", 2, "the stream ends 5 bytes before the 10 bytes announced"),
        ("M 100644 inline a\ndata 2\nab\n\n# note\nM 100644 inline b\ndata 1\nx\nblob\n", 9, "expected 'M 100644 inline PATH', found 'blob'"),
        ("M 100644 inline \ndata 0\n", 1, "expected 'M 100644 inline PATH'"),
    ])
    func aMalformedStreamSaysWhereAndSavesNothing(stream: String, line: Int, message: String) throws {
        let error = try #require(throws: TruceError.self) { try ImportSource.stream(Data(stream.utf8)) }
        guard case .malformedStream(let reported, _) = error else {
            Issue.record("unexpected error \(error)")
            return
        }
        #expect(reported == line)
        #expect(error.localizedDescription.contains(message), "\(error.localizedDescription)")
    }

    /// A stream read from a file (mapped) or from a pipe (read whole) is the stream its bytes are: the same entries,
    /// refusals, documents and report; a path given twice keeps its first place and its last content, compared as
    /// bytes (two spellings of "é" are two documents, each with its own history); a malformed file says where and
    /// saves nothing.
    @Test func aStreamReadFromAFileOrAPipeIsTheStreamItsBytesAre() async throws {
        var stream = Data("M 100644 inline notes/b.md\ndata 5\nfirst\nM 100644 inline ../escape\ndata 1\nx\n".utf8)
        stream.append(Data("M 100644 inline caf\u{E9}\ndata 3\nnfc\nM 100644 inline cafe\u{301}\ndata 3\nnfd\n".utf8))
        for index in 0..<300 { stream.append(Data("M 100644 inline d\(index % 7)/doc\(index)\ndata 4\n\(1000 + index)\n".utf8)) }
        stream.append(Data("M 100644 inline notes/b.md\ndata 6\nsecond".utf8))
        let folder = TemporaryDirectory("truce-stream")
        folder.write(stream, to: "stream")
        let fromFile = try ImportSource.stream(reading: try #require(FileHandle(forReadingAtPath: folder.file("stream"))))
        let pipe = Pipe(), bytes = stream
        let writer = Thread {
            pipe.fileHandleForWriting.write(bytes)
            try? pipe.fileHandleForWriting.close()
        }
        writer.start()
        let fromPipe = try ImportSource.stream(reading: pipe.fileHandleForReading)
        let fromBytes = try ImportSource.stream(stream)
        let keys = ["notes/b.md", "caf\u{E9}", "cafe\u{301}"] + (0..<300).map { "d\($0 % 7)/doc\($0)" }
        for source in [fromFile, fromPipe, fromBytes] {
            #expect(source.entries.map(\.key.rawValue.utf8).map(Array.init) == keys.map { Array($0.utf8) })
            #expect(source.refused.map(\.path) == ["../escape"])
        }
        var reports: [ImportReport] = []
        for source in [fromFile, fromPipe, fromBytes] {
            let test = try TestStore()
            reports.append(try await test.store.importDocuments(source, device: "script", date: Date(timeIntervalSince1970: 1_796_000_000)))
            #expect(try test.store.contents(of: "notes/b.md") == .text("second"))
            #expect(try test.store.contents(of: DocumentKey("cafe\u{301}")) == .text("nfd"))
            // Each spelling's version stands alone: neither is made on the other's.
            for key in ["caf\u{E9}", "cafe\u{301}"] {
                let head = try #require(try test.store.currentVersion(of: DocumentKey(key)))
                #expect(try test.git("rev-list", "--count", head.id.hex) == "1\n", "\(key) has another document's history")
            }
            #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)
        }
        #expect(reports.map(\.newVersions) == [303, 303, 303])
        #expect(Set(reports.map { $0.versions.map(\.key) }).count == 1, "the sources imported in different orders")

        folder.write(stream + Data("\nblob\n".utf8), to: "malformed")
        let error = try #require(throws: TruceError.self) {
            try ImportSource.stream(reading: try #require(FileHandle(forReadingAtPath: folder.file("malformed"))))
        }
        guard case .malformedStream(let line, _) = error else {
            Issue.record("unexpected error \(error)")
            return
        }
        #expect(line == stream.count(where: { $0 == 0x0A }) + 2)
    }

    // MARK: - Export

    @Test func exportWritesCurrentVersionsListsConflictsAndLeavesDeletionsOut() async throws {
        let test = try TestStore()
        try test.store.save(.text("a"), to: "a.txt", device: "laptop")
        try test.store.save(.text("gone"), to: "dir/gone.txt", device: "laptop")
        try test.store.delete("dir/gone.txt", device: "laptop")
        try test.makeConflict("c.txt", base: .text("base"), heads: [("laptop", .text("older")), ("phone", .text("newer"))])
        let out = TemporaryDirectory("truce-export")

        let report = try await test.store.exportDocuments(into: out.file("new/folder"))
        #expect((report.written, report.deleted, report.inConflict, report.failed) == (2, 1, ["c.txt"], []))
        #expect(FileManager.default.contents(atPath: out.file("new/folder/c.txt")) == .text("newer"))
        #expect(FileManager.default.contents(atPath: out.file("new/folder/a.txt")) == .text("a"))
        #expect(!FileManager.default.fileExists(atPath: out.file("new/folder/dir")))
    }

    @Test func exportRefusesAFolderThatIsNotEmptyUnlessForcedAndNeverWritesThroughALink() async throws {
        let test = try TestStore()
        try test.store.save(.text("new"), to: "a.txt", device: "laptop")
        try test.store.save(.text("through"), to: "sub/b.txt", device: "laptop")
        let out = TemporaryDirectory("truce-export")
        let outside = TemporaryDirectory("truce-outside")
        out.write(.text("old"), to: "a.txt")
        out.write(.text("other"), to: "unrelated.txt")
        try FileManager.default.createSymbolicLink(atPath: out.file("sub"), withDestinationPath: outside.path)

        #expect(throws: TruceError.self) { try test.store.exportDocuments(to: out.path) }
        #expect(FileManager.default.contents(atPath: out.file("a.txt")) == .text("old"))

        let report = try await test.store.exportDocuments(into: out.path, overwrite: true)
        #expect(report.written == 1)
        #expect(report.failed == [ImportReport.PathIssue(path: "sub/b.txt", reason: "'sub' on its path is a symbolic link (not followed)")])
        #expect(FileManager.default.contents(atPath: out.file("a.txt")) == .text("new"))
        #expect(FileManager.default.contents(atPath: out.file("unrelated.txt")) == .text("other"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty)
    }

    @Test func aDocumentThatCannotBeAFileBesideAnotherIsReportedAndTheRestWritten() async throws {
        let test = try TestStore()
        try test.store.save(.text("file a"), to: "a", device: "laptop")
        try test.store.save(.text("below a"), to: "a/b", device: "laptop")
        try test.store.save(.text("c"), to: "c", device: "laptop")
        let out = TemporaryDirectory("truce-export")
        let report = try await test.store.exportDocuments(into: out.path)
        #expect(report.written == 2)
        #expect(report.failed == [ImportReport.PathIssue(path: "a/b", reason: "'a' on its path is a file, not a folder")])
        #expect(FileManager.default.contents(atPath: out.file("a")) == .text("file a"))
        #expect(FileManager.default.contents(atPath: out.file("c")) == .text("c"))
    }

    @Test func exportNeverWritesIntoTheStore() async throws {
        let test = try TestStore()
        try test.store.save(.text("x"), to: "refs/heads/main", device: "laptop")
        let before = snapshot(ofStore: test.path)
        for target in [test.path, test.path + "/refs", test.path + "/new/folder", test.directory.path + "/./store/../store/objects"] {
            #expect(throws: TruceError.invalidFolder(target, reason: "it is the store or inside it")) {
                try test.store.exportDocuments(to: target, overwrite: true)
            }
        }
        #expect(snapshot(ofStore: test.path) == before)
        #expect(try await test.store.exportDocuments(into: test.directory.file("store-copy")).written == 1, "a sibling named like the store is fine")
    }

    @Test func exportAtADateWritesTheVersionsCurrentThen() async throws {
        let test = try TestStore()
        let store = test.store
        func at(_ minutes: Double) -> Date { start.addingTimeInterval(minutes * 60) }
        // a.txt: v1 at 1, v2 at 3. b.txt: saved at 1, deleted at 2. c.txt: base at 1, heads at 2 and 3, resolved.
        let v1 = try store.save(.text("a1"), to: "a.txt", device: "laptop", date: at(1))
        try store.save(.text("a2"), to: "a.txt", device: "laptop", base: v1.id, date: at(3))
        try store.save(.text("b"), to: "b.txt", device: "laptop", date: at(1))
        try store.delete("b.txt", device: "laptop", date: at(2))
        let base = try store.save(.text("c-base"), to: "c.txt", device: "laptop", date: at(1))
        try store.save(.text("c-laptop"), to: "c.txt", device: "laptop", base: base.id, date: at(2))
        try store.save(.text("c-phone"), to: "c.txt", device: "phone", base: base.id, date: at(3))
        // d.txt: two heads with the same bytes, which count as one head, then as now.
        let dBase = try store.save(.text("d-base"), to: "d.txt", device: "laptop", date: at(1))
        try store.save(.text("d-same"), to: "d.txt", device: "laptop", base: dBase.id, date: at(2))
        try store.save(.text("d-same"), to: "d.txt", device: "phone", base: dBase.id, date: at(3))
        // e.txt: heads at 2 and 3, never resolved.
        let eBase = try store.save(.text("e-base"), to: "e.txt", device: "laptop", date: at(1))
        try store.save(.text("e-laptop"), to: "e.txt", device: "laptop", base: eBase.id, date: at(2))
        try store.save(.text("e-phone"), to: "e.txt", device: "phone", base: eBase.id, date: at(3))
        let resolution = try await #require(store.resolve("c.txt", to: .text("c-resolved"), device: "laptop").version)
        #expect(resolution.modificationDate == at(3), "a resolution carries the latest author date of what it settles")

        func export(at minutes: Double) throws -> (files: [String: String], inConflict: [DocumentKey]) {
            let out = TemporaryDirectory("truce-export")
            let report = try store.exportDocuments(to: out.path, versionAt: at(minutes))
            let files = snapshot(ofStore: out.path).mapValues { String(decoding: $0, as: UTF8.self) }
            return (files, report.inConflict)
        }
        #expect(try export(at: 0.5) == ([:], []))
        #expect(try export(at: 1.5) == (["a.txt": "a1", "b.txt": "b", "c.txt": "c-base", "d.txt": "d-base", "e.txt": "e-base"], []))
        #expect(try export(at: 2.5) == (["a.txt": "a1", "c.txt": "c-laptop", "d.txt": "d-same", "e.txt": "e-laptop"], []))
        #expect(try export(at: 3.5) == (["a.txt": "a2", "c.txt": "c-resolved", "d.txt": "d-same", "e.txt": "e-phone"], ["e.txt"]))
        let now = try export(at: 1_000_000)
        #expect(now == (["a.txt": "a2", "c.txt": "c-resolved", "d.txt": "d-same", "e.txt": "e-phone"], ["e.txt"]))
    }

    @Test func aFolderSurvivesImportAndExportByteForByte() async throws {
        let test = try TestStore()
        let folder = TemporaryDirectory("truce-roundtrip")
        try FileManager.default.createDirectory(atPath: folder.file("deep/er/still"), withIntermediateDirectories: true)
        folder.write(Data(), to: "empty")
        folder.write(.text("no final newline"), to: "deep/no-newline.txt")
        folder.write(Data((0...255).map(UInt8.init)) + Data([0, 0, 0x0D, 0x0A]), to: "deep/er/binary.bin")
        folder.write(.text("café NFC\n"), to: "caf\u{E9}.md")
        folder.write(.text("café NFD\n"), to: "cafe\u{301}.md")
        folder.write(.text("日本語\r\n"), to: "deep/er/still/日本語.txt")
        #expect(try await test.store.importDocuments(.folder(at: folder.path), device: "laptop").newVersions == 6)

        let out = TemporaryDirectory("truce-roundtrip-out")
        let report = try await test.store.exportDocuments(into: out.path)
        #expect(report.written == 6)
        let diff = try TestSupport.run("/usr/bin/env", ["diff", "-r", folder.path, out.path])
        #expect(diff.status == 0, "diff -r: \(diff.output)")
    }
}
