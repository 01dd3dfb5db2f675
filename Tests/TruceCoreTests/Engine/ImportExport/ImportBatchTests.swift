import Foundation
import TestSupport
import Testing
import TruceGit

@testable import TruceCore

/// An import larger than a batch is saved batch by batch, in key order, each batch all or nothing.
@Suite(.timeLimit(.minutes(10))) struct ImportBatchTests {
    static let keys = ["a", "b", "c", "d", "e", "f", "g"].map { "notes/\($0).txt" }

    static func folder(_ keys: [String] = keys) -> TemporaryDirectory {
        let folder = TemporaryDirectory("truce-import")
        try? FileManager.default.createDirectory(atPath: folder.file("notes"), withIntermediateDirectories: true)
        for key in keys.reversed() { folder.write(.text("bytes of \(key)\n"), to: key) }
        return folder
    }

    static func journalEntries(_ test: TestStore) throws -> Int {
        guard (try? test.git("rev-parse", "--verify", "-q", ChangeJournal.reference)) != nil else { return 0 }
        return Int(try test.git("rev-list", "--count", ChangeJournal.reference).trimmingCharacters(in: .newlines)) ?? -1
    }

    /// 40 documents in batches of 17: three batches, journaled as two entries of 17 changes and six of one (the
    /// journal holds more than 16 changes as one entry), and the report as one batch's.
    @Test func eachBatchIsSavedAndJournaledOnItsOwn() throws {
        let test = try TestStore()
        let keys = (0..<40).map { "notes/\($0 < 10 ? "0" : "")\($0).txt" }
        let folder = Self.folder(keys)
        let entriesBefore = try Self.journalEntries(test)
        let report = try Importing(access: test.store.access, author: "laptop", date: Date()).run(
            .folder(at: folder.path), progress: nil, saving: nil, cancellation: nil, documentsPerBatch: 17)
        #expect((report.documents, report.newVersions, report.unchanged) == (40, 40, 0))
        #expect(report.versions.map(\.key.rawValue) == keys)
        #expect(try Self.journalEntries(test) == entriesBefore + 2 + 6)
        #expect(try test.store.changes().changes.map(\.key.rawValue) == keys)
        for key in keys { #expect(try test.store.contents(of: DocumentKey(key)) == .text("bytes of \(key)\n")) }
        #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)
    }

    /// Cancelled while its second batch is written, an import keeps the first batch and nothing of the second; run
    /// again, it saves only the rest.
    @Test func aCancelledImportKeepsTheBatchesSavedAndAnotherFinishesIt() throws {
        let test = try TestStore()
        let folder = Self.folder()
        let cancellation = Cancellation()
        #expect(throws: TruceError.cancelled) {
            try Importing(access: test.store.access, author: "laptop", date: Date()).run(
                .folder(at: folder.path), progress: nil, saving: { done, _ in if done > 3 { cancellation.cancel() } },
                cancellation: cancellation, documentsPerBatch: 3)
        }
        let states = try Self.keys.map { try test.store.state(of: DocumentKey($0)) }
        #expect(states == Array(repeating: .settled, count: 3) + Array(repeating: .absent, count: 4))
        let again = try Importing(access: test.store.access, author: "laptop", date: Date()).run(
            .folder(at: folder.path), progress: nil, saving: nil, cancellation: nil, documentsPerBatch: 3)
        #expect((again.documents, again.newVersions, again.unchanged) == (7, 4, 3))
        #expect(again.versions.map(\.key.rawValue) == Array(Self.keys.dropFirst(3)))
        #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)
    }
}
