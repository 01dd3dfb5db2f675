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

    /// An import reads its documents' heads together, never one document at a time, and leaves each document as saving
    /// it alone would: into a store holding half of them (some with the same bytes, one in conflict), only the one in
    /// conflict has its heads listed on its own, the unchanged are skipped, and each new version stands on the heads before it.
    @Test func anImportReadsItsDocumentsHeadsTogether() throws {
        let test = try TestStore(), twin = try TestStore()
        let store = try DocumentStore.open(at: test.path, savesThroughLog: false, instrumentation: StoreInstrumentation())
        let keys = try (0..<40).map { try DocumentKey("notes/\($0 < 10 ? "0" : "")\($0).txt") }
        for target in [store, twin.store] {
            for (index, key) in keys.prefix(20).enumerated() {
                let saved = try target.save(.text(index < 10 ? "bytes of \(key.rawValue)\n" : "old\n"), to: key, device: "laptop")
                // The last one is in conflict: two versions made on the first.
                if index == 19 {
                    _ = try target.save(.text("after\n"), to: key, device: "laptop")
                    _ = try target.save(.text("beside\n"), to: key, device: "phone", base: saved.id)
                }
            }
        }
        #expect(try store.state(of: keys[19]) == .inConflict)
        var stream = Data()
        for key in keys { stream += Data("M 100644 inline \(key.rawValue)\ndata \(key.rawValue.utf8.count + 10)\nbytes of \(key.rawValue)\n".utf8) }
        let listingsBefore = store.instrumentation.documentHeadListings
        let report = try store.importDocumentsOnCallingThread(from: .stream(stream), device: "laptop", date: Date())
        // One: the document in conflict, whose conflict marker is worked out again from its heads.
        #expect(store.instrumentation.documentHeadListings == listingsBefore + 1, "an import listed documents' heads one by one")
        #expect((report.documents, report.newVersions, report.unchanged) == (40, 30, 10))
        for key in keys.dropFirst(10).prefix(10) {
            let parents = try store.versions(of: key).current.map { try test.git("rev-list", "--parents", "-n1", $0.id.hex) } ?? ""
            let alone = try twin.store.save(.text("bytes of \(key.rawValue)\n"), to: key, device: "laptop")
            let parentsAlone = try twin.git("rev-list", "--parents", "-n1", alone.id.hex)
            #expect(parents.split(separator: " ").count == parentsAlone.split(separator: " ").count, "\(key.rawValue): parents differ")
            #expect(try store.state(of: key) == twin.store.state(of: key))
        }
        for key in keys { #expect(try store.contents(of: key) == .text("bytes of \(key.rawValue)\n")) }
        #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)
    }
}
