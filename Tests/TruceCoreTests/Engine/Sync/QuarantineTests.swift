import Foundation
import TestSupport
import Testing

@testable import TruceCore
@testable import TruceGit

/// What a download brings joins the store only through `admit`: as it came when every object in it was checked,
/// packed anew with only the checked versions' objects otherwise.
@Suite(.timeLimit(.minutes(10))) struct QuarantineTests {
    /// A store holding `count` documents, and their ids.
    static func source(_ count: Int) throws -> (TestStore, [VersionID]) {
        let test = try TestStore()
        let ids = try test.store.saveBatch(
            (0..<count).map { BatchSave(key: DocumentKey(stringLiteral: "docs/\($0).md"), content: .text("\($0)\n"), device: "laptop") })
        return (test, ids)
    }

    /// Downloads `source`'s heads into a quarantine of `target` as one pack (what a fetch leaves), then admits `ids`
    /// with `checked` minus `unchecked`; returns the download's pack name and whether the store now holds that file.
    static func download(
        from source: TestStore, into target: TestStore, admitting ids: [VersionID],
        leavingUnchecked unchecked: Int
    ) throws -> (pack: String, kept: Bool, objects: [String]) {
        let (pack, objects) = try target.store.withEngine { engine -> (String, [String]) in
            let repository = engine.repository
            let quarantine = try Quarantine(of: repository)
            let directory = quarantine.repository.path
            let fetched = try git([
                "--git-dir", directory, "-c", "fetch.unpackLimit=1", "fetch", "-q", source.path, "refs/truce/heads/*:refs/incoming/*",
            ])
            try #require(fetched.status == 0, "git fetch into the quarantine: \(fetched.errorOutput)")
            let objects = try git(["--git-dir", directory, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)"]).output
                .split(separator: "\n").map(String.init).sorted()
            let pack = try #require(try FileManager.default.contentsOfDirectory(atPath: directory + "/objects/pack").first { $0.hasSuffix(".pack") })
            let checked = CheckedObjects(objects.dropFirst(unchecked).compactMap(ObjectID.init(hex:)))
            try quarantine.admit(ids.map(\.objectID), hiding: [], whenOnly: checked)
            return (pack, objects)
        }
        return (pack, FileManager.default.fileExists(atPath: target.path + "/objects/pack/" + pack), objects)
    }

    @Test func aDownloadWhoseEveryObjectWasCheckedJoinsTheStoreAsItCame() throws {
        let (source, ids) = try Self.source(30)
        let target = try TestStore()
        let result = try Self.download(from: source, into: target, admitting: ids, leavingUnchecked: 0)
        #expect(result.kept, "the downloaded pack \(result.pack) was not moved into the store")
        for object in result.objects { #expect(try target.git("cat-file", "-e", object).isEmpty) }
        #expect(try target.git("fsck", "--strict", "--no-dangling").isEmpty)
    }

    @Test func aDownloadHoldingAnUncheckedObjectIsPackedAnewWithTheCheckedVersionsOnly() throws {
        let (source, ids) = try Self.source(30)
        let target = try TestStore()
        let result = try Self.download(from: source, into: target, admitting: Array(ids.prefix(10)), leavingUnchecked: 1)
        #expect(!result.kept, "a download with an unchecked object went in as it came")
        for id in ids.prefix(10) { #expect(try git(["-C", target.path, "cat-file", "-e", id.hex]).status == 0) }
        for id in ids.dropFirst(10) { #expect(try git(["-C", target.path, "cat-file", "-e", id.hex]).status != 0, "\(id) was not admitted") }
    }

    @Test func aFirstSyncFromALocalStoreLooksForNoLooseCopyOfWhatItReadsFromPacks() async throws {
        let (source, ids) = try Self.source(200)
        let target = try TestStore()
        let before = target.store.instrumentation.looseObjectLooks
        _ = try await target.store.sync(with: source.path)
        // Each of the 800 objects read in place from the other store's pack once cost a look for a loose copy here.
        #expect(target.store.instrumentation.looseObjectLooks - before <= 10)
        for id in ids { #expect(try git(["-C", target.path, "cat-file", "-e", id.hex]).status == 0) }
        #expect(try target.git("fsck", "--strict", "--no-dangling").isEmpty)
    }
}
