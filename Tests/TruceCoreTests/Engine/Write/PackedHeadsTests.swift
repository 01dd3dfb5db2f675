import Foundation
import Synchronization
import TestSupport
import Testing

@testable import TruceCore
@testable import TruceGit

/// Heads written in bulk are lines of `packed-refs`: git reads them as refs, Truce finds one document's by binary search.
@Suite(.timeLimit(.minutes(10))) struct PackedHeadsTests {
    static func keys(_ count: Int) -> [DocumentKey] {
        (0..<count).map { DocumentKey(stringLiteral: "docs/\($0 % 7)/file-\($0).txt") }
    }

    static func saveBatch(_ count: Int, in test: TestStore) throws -> [VersionID] {
        try test.store.saveBatch(keys(count).map { BatchSave(key: $0, content: .text("\($0.rawValue)\n"), device: "laptop") })
    }

    static func looseHeadFiles(in test: TestStore) -> [String] {
        let root = test.path + "/refs/truce/heads"
        let enumerator = FileManager.default.enumerator(atPath: root)
        var files: [String] = []
        while let relative = enumerator?.nextObject() as? String {
            if enumerator?.fileAttributes?[.type] as? FileAttributeType == .typeRegular { files.append(relative) }
        }
        return files
    }

    @Test func aBatchPublishesItsHeadsAsPackedLinesThatGitReads() throws {
        let test = try TestStore()
        let ids = try Self.saveBatch(120, in: test)
        #expect(Self.looseHeadFiles(in: test).isEmpty, "a bulk write left loose head files")
        #expect(!FileManager.default.fileExists(atPath: test.path + "/logs/refs/truce/heads"), "a bulk write left reflogs of heads")
        let listed = try test.git("for-each-ref", "--format=%(objectname)", "refs/truce/heads/").split(separator: "\n").map(String.init)
        #expect(Set(listed) == Set(ids.map(\.hex)))
        #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)
        for (key, id) in zip(Self.keys(120), ids) { #expect(try test.store.currentVersion(of: key)?.id == id) }
        // The journal, whose reflog records each append, holds every version the batch published.
        #expect(Set(try test.store.changes().changes.map(\.version)) == Set(ids))
    }

    /// A batch lists its documents' heads before it writes, and publishing takes that listing while `packed-refs` is
    /// unchanged: a head another writer published meanwhile is still seen, and the document is in conflict, with its
    /// marker, rather than two heads and no marker. Loose, as a single save publishes one, between the batch's listing
    /// and its publishing; or loose and then packed (`packed-refs` rewritten, as a batch or a prune does) while
    /// publishing lists the loose heads again, after it and before it looks at `packed-refs`.
    @Test(arguments: [false, true]) func aHeadPublishedWhileABatchWroteStaysBesideItsHead(packed packing: Bool) throws {
        let test = try TestStore()
        let before = try Self.saveBatch(20, in: test)
        let key = Self.keys(20)[3], packed = before[3]
        let directory = ReferenceLayout.headsDirectory(of: key)
        // The batch's listing is the first listing of loose heads; publishing's is the second.
        let listings = Mutex(0), played = Mutex(false)
        test.store.instrumentation.afterListingLooseReferences {
            let listing = listings.withLock { count in
                count += 1
                return count
            }
            guard listing == (packing ? 2 : 1) else { return }
            played.withLock { $0 = true }
            // Another writer's version of the document, made from its head, published as a loose ref.
            do {
                let message = try test.git("log", "-1", "--format=%B", packed.hex)
                let other = try test.git("commit-tree", packed.hex + "^{tree}", "-p", packed.hex, "-m", message)
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                _ = try test.git("update-ref", directory + other, other)
                if packing { _ = try test.git("pack-refs", "--all") }
            } catch {
                Issue.record("the other writer failed, so nothing raced: \(error)")
            }
        }
        defer { test.store.instrumentation.afterListingLooseReferences(nil) }
        let after = try test.store.saveBatch(
            Self.keys(20).map { BatchSave(key: $0, content: .text("\($0.rawValue), again\n"), device: "laptop") })
        #expect(played.withLock { $0 }, "the other writer never ran")
        let heads = try test.git("for-each-ref", "--format=%(objectname)", directory).split(separator: "\n").map(String.init)
        #expect(heads.count == 2 && heads.contains(after[3].hex), "\(heads)")
        #expect(try test.store.documentsInConflict().map(\.key) == [key])
        #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)
    }

    @Test func oneDocumentOfAPackedStoreIsFoundWithoutListingTheOthers() throws {
        let test = try TestStore()
        _ = try Self.saveBatch(300, in: test)
        let reopened = try DocumentStore.open(at: test.path)
        let (listed, read) = (reopened.instrumentation.referencesListed, reopened.instrumentation.packedRecordsRead)
        _ = try reopened.versions(of: Self.keys(300)[137])
        #expect(reopened.instrumentation.referencesListed - listed == 1)
        // A binary search of 300 lines looks at a handful of them (about two per halving), not at every one.
        #expect(reopened.instrumentation.packedRecordsRead - read <= 2 * 9 + 2, "\(reopened.instrumentation.packedRecordsRead - read) lines read")
    }

    @Test func aSaveOnAPackedHeadLeavesItsLineUntilPruneTidiesIt() throws {
        let test = try TestStore()
        let ids = try Self.saveBatch(20, in: test)
        let key = Self.keys(20)[3]
        let directory = ReferenceLayout.headsDirectory(of: key)
        let saved = try test.store.save(.text("edited\n"), to: key, device: "phone")
        #expect(saved.parents == [ids[3]])
        let versions = try test.store.versions(of: key)
        #expect(versions.state == .settled)
        #expect(versions.current?.id == saved.id)
        // Both refs exist, the replaced one packed; readers drop it because the new head descends from it.
        let refs = try test.git("for-each-ref", "--format=%(objectname)", directory).split(separator: "\n").map(String.init)
        #expect(Set(refs) == [ids[3].hex, saved.id.hex])
        _ = try test.store.prune(expire: 0)
        #expect(try test.git("for-each-ref", "--format=%(objectname)", directory) == saved.id.hex + "\n")
        #expect(try test.git("for-each-ref", "--format=%(objectname)", "refs/truce/heads/").split(separator: "\n").count == 20)
        #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)
    }

    @Test func headsPackedByGitItselfAreReadIncludingBesideAPeeledTag() throws {
        let test = try TestStore()
        var saved: [DocumentKey: VersionID] = [:]
        for key in Self.keys(40) { saved[key] = try test.store.save(.text("x\n"), to: key, device: "laptop").id }
        // An annotated tag gets a peeled (^) line in packed-refs, between the ref lines a binary search lands on.
        _ = try test.git("tag", "-a", "-m", "a tag", "v1", saved[Self.keys(40)[0]]!.hex)
        _ = try test.git("pack-refs", "--all")
        #expect(Self.looseHeadFiles(in: test).isEmpty)
        let packed = try String(contentsOfFile: test.path + "/packed-refs", encoding: .utf8)
        #expect(packed.contains("\n^"))
        let reopened = try DocumentStore.open(at: test.path)
        for (key, id) in saved { #expect(try reopened.currentVersion(of: key)?.id == id, "\(key.rawValue)") }
        #expect(try reopened.currentVersion(of: "docs/absent.txt") == nil)
    }

    @Test func anUnsortedPackedFileIsReadLineByLine() throws {
        let test = try TestStore()
        let ids = try Self.saveBatch(30, in: test)
        let path = test.path + "/packed-refs"
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("#") }
        // No header, newest first: what an old writer could leave; a binary search would miss most names.
        try (lines.reversed().joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        let reopened = try DocumentStore.open(at: test.path)
        for (key, id) in zip(Self.keys(30), ids) { #expect(try reopened.currentVersion(of: key)?.id == id) }
        // Without the sorted trait every lookup reads the whole file: 30 lookups of 30 lines.
        #expect(reopened.instrumentation.packedRecordsRead >= 30 * 30)
    }

    @Test func aDamagedPackedLineFailsTheReadInsteadOfHidingAVersion() throws {
        let test = try TestStore()
        _ = try Self.saveBatch(30, in: test)
        let path = test.path + "/packed-refs"
        var text = try String(contentsOfFile: path, encoding: .utf8)
        let key = Self.keys(30)[11]
        let directory = ReferenceLayout.headsDirectory(of: key)
        let line = try #require(text.split(separator: "\n").first { $0.contains(directory) })
        text = text.replacingOccurrences(of: String(line), with: "zz" + line.dropFirst(2))
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let reopened = try DocumentStore.open(at: test.path)
        #expect {
            _ = try reopened.versions(of: key)
        } throws: { error in
            "\(error)".contains("packed-refs") && "\(error)".contains("damaged line")
        }
    }

    @Test func deletingAPackedReferenceKeepsEveryOtherLine() throws {
        let test = try TestStore()
        let ids = try Self.saveBatch(25, in: test)
        let key = Self.keys(25)[5]
        let name = ReferenceLayout.headReference(of: key, version: ids[5])
        let deleted = try test.store.withEngine { engine in
            let repository = engine.repository
            return [
                try repository.deleteReference(name, expecting: ids[5].objectID), try repository.deleteReference(name, expecting: ids[5].objectID),
            ]
        }
        #expect(deleted == [true, false])
        #expect(try test.store.currentVersion(of: key) == nil)
        let left = try test.git("for-each-ref", "--format=%(objectname)", "refs/truce/heads/").split(separator: "\n").map(String.init)
        #expect(Set(left) == Set(ids.map(\.hex)).subtracting([ids[5].hex]))
        #expect(!FileManager.default.fileExists(atPath: test.path + "/packed-refs.lock"))
    }
}
