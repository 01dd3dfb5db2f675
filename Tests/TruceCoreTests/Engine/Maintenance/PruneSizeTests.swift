import Foundation
import TestSupport
import Testing

@testable import TruceCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Prune never leaves a store bigger than it found it, and never bigger than `git gc` leaves the same data.
@Suite(.timeLimit(.minutes(10))) struct PruneSizeTests {
    /// What a git directory takes on disk: blocks (as `du` counts them), bytes, and entries, directories included.
    struct Footprint: Equatable, CustomStringConvertible {
        var allocated = 0, bytes = 0, entries = 0
        var description: String { "\(allocated) bytes allocated, \(bytes) bytes, \(entries) files and directories" }

        init(of path: String) {
            guard let enumerator = FileManager.default.enumerator(atPath: path) else { return }
            while let relative = enumerator.nextObject() as? String {
                var status = stat()
                guard lstat(path + "/" + relative, &status) == 0 else { continue }
                allocated += Int(status.st_blocks) * 512
                bytes += Int(status.st_size)
                entries += 1
            }
        }

        /// True when no measure of `self` is above `other`'s.
        func fits(in other: Footprint) -> Bool { allocated <= other.allocated && bytes <= other.bytes && entries <= other.entries }
    }

    /// A store of `count` imported documents of about 100 bytes, most of whose heads are lines of `packed-refs`.
    static func importedStore(documents count: Int) async throws -> TestStore {
        let test = try TestStore()
        let folder = TemporaryDirectory("truce-prune-size")
        for index in 0..<count {
            let directory = "d\(index % 50)"
            try FileManager.default.createDirectory(atPath: folder.file(directory), withIntermediateDirectories: true)
            folder.write(.text("document \(index)\n" + String(repeating: "x", count: 80) + "\n"), to: "\(directory)/doc\(index).txt")
        }
        let report = try await test.store.importDocuments(.folder(at: folder.path), device: "importer")
        #expect(
            report.newVersions == count,
            "\(report.newVersions) new, \(report.unchanged) unchanged, refused \(report.refused), skipped \(report.skipped)")
        return test
    }

    /// `git gc --prune=now` of a copy of the store, and what it leaves.
    static func gitGC(ofCopyOf test: TestStore) throws -> Footprint {
        let copy = TemporaryDirectory("truce-prune-size-git")
        let path = copy.file("store")
        try FileManager.default.copyItem(atPath: test.path, toPath: path)
        let gc = try git(["-C", path, "gc", "--prune=now", "--quiet"])
        #expect(gc.status == 0, "git gc: \(gc.errorOutput)")
        return Footprint(of: path)
    }

    @Test func pruneNowOfImportedDocumentsWithDroppedVersionsLeavesTheStoreNoBiggerThanItOrGitGC() async throws {
        let test = try await Self.importedStore(documents: 3000)
        // Loose heads with reflogs and small packs, heads that replace packed ones, and deletions --now drops.
        for index in 0..<20 {
            try test.store.save(.text("edited \(index)\n"), to: DocumentKey(stringLiteral: "d\(index % 50)/doc\(index).txt"), device: "laptop")
        }
        _ = try await test.store.saveBatch(
            (100..<300).map { index in
                BatchSave(key: DocumentKey(stringLiteral: "d\(index % 50)/doc\(index).txt"), content: index < 200 ? .text("batch \(index)\n") : nil)
            })
        let before = Footprint(of: test.path)
        let git = try Self.gitGC(ofCopyOf: test)

        let report = try await test.store.prune(expire: 0)
        let after = Footprint(of: test.path)
        #expect(report.droppedDocuments.count == 100)
        #expect(after.fits(in: before), "prune --now grew the store from \(before) to \(after)")
        #expect(after.allocated <= git.allocated, "prune --now left \(after), git gc --prune=now \(git)")
        #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)

        // Nothing is left to reclaim: a second prune changes nothing at all.
        let files = snapshot(ofStore: test.path)
        try await test.store.prune(expire: 0)
        #expect(Footprint(of: test.path) == after)
        #expect(snapshot(ofStore: test.path) == files)
    }

    @Test func pruneNowShrinksAStoreWithSomethingToReclaim() async throws {
        let test = try await Self.importedStore(documents: 2000)
        _ = try await test.store.saveBatch(
            (0..<600).map { BatchSave(key: DocumentKey(stringLiteral: "d\($0 % 50)/doc\($0).txt"), content: nil) })
        for index in 600..<610 {
            try test.store.delete(DocumentKey(stringLiteral: "d\(index % 50)/doc\(index).txt"), device: "laptop")
        }
        let before = Footprint(of: test.path)

        let report = try await test.store.prune(expire: 0)
        let after = Footprint(of: test.path)
        #expect(report.droppedDocuments.count == 610)
        #expect(
            after.allocated < before.allocated && after.bytes < before.bytes && after.entries <= before.entries,
            "prune --now of 610 dropped documents went from \(before) to \(after)")
        #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)
    }

    @Test func pruneAtTheDefaultGraceOfACompactStoreWritesNothing() async throws {
        let test = try await Self.importedStore(documents: 500)
        try await test.store.prune(expire: 0)
        let files = snapshot(ofStore: test.path), before = Footprint(of: test.path)
        try await test.store.prune()
        #expect(Footprint(of: test.path) == before)
        #expect(snapshot(ofStore: test.path) == files)
    }
}
