import Foundation
import TestSupport
import Testing

/// One save costs the same in a store of a thousand documents and in one of twenty thousand: the files it opens, the
/// bytes it reads, the directories it lists and the files it maps, as the tracer records them (not a timing).
@Suite(.timeLimit(.minutes(10))) struct SaveCostTests {
    /// What one traced `truce` run read under its store, the object database apart.
    ///
    /// Which packs a save opens depends on where its lookups find their
    /// objects (libgit2 tries packs newest first and opens a pack's data only
    /// on a hit), and the save log's records hold compressed objects, whose
    /// length follows their contents: those are counted apart, and bounded.
    struct Work: Equatable, CustomStringConvertible {
        var opens = 0, bytesRead = 0, listings = 0, mappings = 0
        /// Bytes read from `packed-refs` with `read`: libgit2 1.5 read the whole file before writing any reference.
        var packedReferencesBytesRead = 0
        /// Files opened under `objects/`: packs and their indexes, each mapped, and the pack the save writes.
        var objectFilesOpened = 0
        /// Equal in everything but the object files, which are bounded instead.
        static func == (one: Work, other: Work) -> Bool {
            (one.opens, one.bytesRead, one.listings, one.mappings, one.packedReferencesBytesRead)
                == (other.opens, other.bytesRead, other.listings, other.mappings, other.packedReferencesBytesRead)
        }

        var description: String {
            "\(opens) opens, \(bytesRead) bytes read (\(packedReferencesBytesRead) of packed-refs), \(listings) listings, "
                + "\(mappings) mappings; \(objectFilesOpened) object files opened"
        }

        init(_ calls: [TracedCall]) {
            var pathOfInode: [UInt64: String] = [:]
            for call in calls {
                let path = call.kind == .open || call.kind == .list ? call.path : pathOfInode[call.inode] ?? ""
                let isObjects = path.hasPrefix("objects/")
                switch call.kind {
                case .open:
                    pathOfInode[call.inode] = call.path
                    if isObjects { objectFilesOpened += 1 } else { opens += 1 }
                case .read where path == "packed-refs":
                    packedReferencesBytesRead += Int(call.length)
                    bytesRead += Int(call.length)
                case .read where !isObjects && path != "truce-saves.log":
                    bytesRead += Int(call.length)
                case .list:
                    listings += 1
                // A mapping is counted, not its length: the kernel reads only the pages a lookup touches (a binary
                // search of `packed-refs`, of a pack's index).
                case .map where !isObjects:
                    mappings += 1
                default: break
                }
            }
        }
    }

    /// A store of `count` documents imported in one batch, so that their heads are lines of `packed-refs`.
    static func store(documents count: Int) throws -> CLIStore {
        let store = try CLIStore()
        var stream = ""
        for index in 0..<count {
            let body = "document \(index)\n"
            stream += "M 100644 inline d\(index % 100)/doc\(index).txt\ndata \(body.utf8.count)\n\(body)\n"
        }
        let imported = try store.run("import", "-", "--device", "importer", input: .text(stream))
        #expect(imported.status == 0, "import: \(imported.errorOutput)")
        return store
    }

    /// Saves `text` to `key` under the tracer and returns what the save read.
    static func work(ofSaving text: String, to key: String, in store: CLIStore) throws -> Work {
        let run = try CrashTrace.truce(
            ["save", key, "-", "--device", "laptop"], store: store.path, input: .text(text), environment: ["TRUCE_TRACE_READS": "1"])
        #expect(run.result.status == 0, "save: \(run.result.errorOutput)")
        return Work(run.calls)
    }

    @Test func oneSaveReadsTheSameAtAThousandAndAtTwentyThousandHeads() throws {
        let small = try Self.store(documents: 1000), large = try Self.store(documents: 20_000)
        for (round, key) in ["d7/doc7.txt", "d7/doc7.txt", "d9/doc9.txt"].enumerated() {
            let few = try Self.work(ofSaving: "edit \(round)\n", to: key, in: small)
            let many = try Self.work(ofSaving: "edit \(round)\n", to: key, in: large)
            #expect(many.packedReferencesBytesRead == 0, "save \(round) read packed-refs: \(many)")
            #expect(few == many, "save \(round): 1,000 heads: \(few); 20,000 heads: \(many)")
            let packs = try FileManager.default.contentsOfDirectory(atPath: large.path + "/objects/pack").filter { $0.hasSuffix(".pack") }
            // Each pack and index at most once; the new pack, its index, and the directories fsynced around them.
            #expect(many.objectFilesOpened <= 2 * packs.count + 4, "save \(round) opened \(many.objectFilesOpened) files of \(packs.count) packs")
        }
        // What the saves wrote themselves reads in plain git as libgit2's own writes did.
        for store in [small, large] {
            let fsck = try git(["-C", store.path, "fsck", "--strict", "--no-dangling"])
            #expect(fsck.status == 0 && fsck.output.isEmpty, "git fsck: \(fsck.output) \(fsck.errorOutput)")
            let heads = try git(["-C", store.path, "for-each-ref", "--format=%(refname)", "refs/truce/heads/"]).output
            let versions = try store.run("versions", "d7/doc7.txt", "--json")
            #expect(versions.status == 0)
            let current = try #require((try JSONSerialization.jsonObject(with: versions.stdout) as? [String: Any])?["current"] as? [String: Any])
            let id = try #require(current["id"] as? String)
            #expect(heads.contains("/" + id + "\n"))
            let log = try git(["-C", store.path, "reflog", "show", "--format=%H %gs", "refs/truce/journal"]).output
            #expect(log.split(separator: "\n").count == 4, "journal reflog: \(log)")
        }
    }

    /// One `truce save` of a document that has a head: one libgit2 handle (the store's `config` opened once), one
    /// listing of the document's heads (its folder, listed once more after publishing to see that no other writer
    /// published beside it), one pass to disk (the save log untouched, the syncs `FsyncCountTests` promises).
    @Test func oneSaveOpensOneHandleListsItsDocumentOnceAndSyncsOnce() throws {
        let store = try Self.store(documents: 100)
        let key = "d7/doc7.txt"
        #expect(try store.run("save", key, "-", "--device", "laptop", input: .text("first\n")).status == 0)
        let run = try CrashTrace.truce(
            ["save", key, "-", "--device", "laptop"], store: store.path, input: .text("second\n"), environment: ["TRUCE_TRACE_READS": "1"])
        #expect(run.result.status == 0, "save: \(run.result.errorOutput)")
        let folder =
            "refs/truce/heads/"
            + (try git(["-C", store.path, "for-each-ref", "--format=%(refname)", "refs/truce/heads/"]).output
                .split(separator: "\n").first { $0.contains(run.result.output.trimmingCharacters(in: .whitespacesAndNewlines)) }
                .map { String($0.dropFirst("refs/truce/heads/".count).split(separator: "/").dropLast().joined(separator: "/")) } ?? "?")
        let configOpens = run.calls.filter { $0.kind == .open && $0.path == "config" }.count
        let listings = run.calls.filter { $0.kind == .list && $0.path.hasPrefix(folder) }.count
        let syncs = run.calls.filter { $0.kind == .sync || $0.kind == .syncAll }.count
        let logged = run.calls.filter { $0.path.hasPrefix("truce-saves.log") && $0.kind != .open }.count
        print("one truce save: \(configOpens) opening of config, \(listings) listings of \(folder), \(syncs) syncs, \(run.calls.count) calls in all")
        #expect(configOpens == 1, "libgit2 handles: the store's config opened \(configOpens) times")
        #expect(listings == 2, "the document's heads folder listed \(listings) times")
        #expect(logged == 0, "the save log was written or synced")
        #expect(syncs == 11, "a save that replaces its document's head syncs \(syncs) times (FsyncCountTests.promisedFsyncsPerSave)")
    }
}
