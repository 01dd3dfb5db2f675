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

    /// `count` random bytes from `seed`: what deflate cannot shrink.
    static func randomBytes(_ count: Int, seed: UInt64) -> Data {
        var random = SeededRandom(seed: seed)
        return Data((0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) })
    }

    /// How many bytes each of `ids` takes in `store`'s packs (its zlib stream and entry header), as `git verify-pack` says.
    static func sizesInPacks(of ids: [String], in store: TestStore) throws -> [String: Int] {
        var sizes: [String: Int] = [:]
        for pack in try FileManager.default.contentsOfDirectory(atPath: store.path + "/objects/pack") where pack.hasSuffix(".idx") {
            for line in try store.git("verify-pack", "-v", "objects/pack/" + pack).split(separator: "\n") {
                // SHA-1 type size size-in-packfile offset-in-packfile
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                if fields.count == 5, ids.contains(String(fields[0])) { sizes[String(fields[0])] = Int(fields[3]) }
            }
        }
        return sizes
    }

    /// A first sync from a store on a local path copies entries whose zlib streams are longer than the 16 bits a
    /// remembered proof keeps of a length (`PackEntries`): a document of 300 KB of random bytes, and a version whose
    /// commit carries a long note another writer put in its message (the sync's checks read every commit, and remember
    /// its proof for the copy), arrive whole and as the other store holds them.
    @Test func aFirstSyncCopiesEntriesLongerThan64KiBWhole() async throws {
        let source = try TestStore()
        let noise = Self.randomBytes(300_000, seed: 11)
        let document = try source.store.save(noise, to: "media/noise.bin", device: "laptop")
        let first = try source.store.save(.text("a\n"), to: "notes.md", device: "laptop")

        // The next version of notes.md, written with git: Truce's message, a long note inside it (base64 of random bytes).
        let note = Self.randomBytes(120_000, seed: 12).base64EncodedString(options: .lineLength76Characters)
            .replacingOccurrences(of: "\r\n", with: "\n")
        let message = "Save notes.md\n\n\(note)\n\nDocument: notes.md\nDevice: desk\n"
        let tree = try source.git("rev-parse", "\(first.id.hex)^{tree}").trimmingCharacters(in: .whitespacesAndNewlines)
        let written = try git(
            ["-C", source.path, "-c", "user.name=desk", "-c", "user.email=desk@truce", "commit-tree", tree, "-p", first.id.hex, "-F", "-"],
            input: .text(message))
        try #require(written.status == 0, "\(written.errorOutput)")
        let noted = written.output.trimmingCharacters(in: .whitespacesAndNewlines)
        // In a pack of its own, as a whole object (nothing to be a delta of), and the head of notes.md in place of its parent.
        let packed = try git(["-C", source.path, "pack-objects", "-q", "objects/pack/pack"], input: .text(noted + "\n"))
        try #require(packed.status == 0, "\(packed.errorOutput)")
        _ = try source.git("prune-packed")
        let heads = try source.git("for-each-ref", "--format=%(refname)", "refs/truce/heads/").split(separator: "\n")
        let firstHead = try #require(heads.first { $0.hasSuffix("/" + first.id.hex) })
        let directory = firstHead.dropLast(first.id.hex.count)
        _ = try source.git("update-ref", "-d", String(firstHead))
        _ = try source.git("update-ref", directory + noted, noted)

        let blob = try source.git("rev-parse", "\(document.id.hex):media/noise.bin").trimmingCharacters(in: .whitespacesAndNewlines)
        let sizes = try Self.sizesInPacks(of: [blob, noted], in: source)
        try #require(sizes.count == 2 && sizes.values.allSatisfy { $0 > 1 << 16 }, "not past 64 KiB as whole objects: \(sizes)")
        try #require(try source.store.currentVersion(of: "notes.md")?.id.hex == noted)

        let target = try TestStore()
        _ = try await target.store.sync(with: source.path)
        #expect(try target.git("fsck", "--strict").isEmpty)
        for (type, id) in [("blob", blob), ("commit", noted)] {
            let copy = try git(["-C", target.path, "cat-file", type, id]), original = try git(["-C", source.path, "cat-file", type, id])
            #expect(copy.status == 0 && original.status == 0 && copy.stdout == original.stdout, "\(type) \(id): \(copy.errorOutput)")
        }
        #expect(try target.store.contents(of: "media/noise.bin") == noise)
        #expect(try target.store.currentVersion(of: "notes.md")?.id.hex == noted)
        #expect(try target.store.contents(of: "notes.md") == .text("a\n"))
    }
}
