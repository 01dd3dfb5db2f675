import Foundation
import TestSupport
import Testing

/// Every writer on a full file system: one clean line, nothing acknowledged changed, and it works once there is room.
///
/// The store lives on a small tmpfs this test mounts (root may; CI runs as
/// root), filled with a file of zeros until a write fails, and unmounted at
/// the end. The writer must exit 3 with exactly one `truce:` line naming the
/// full disk (or, for a logged save, which needs no new block of the disk,
/// succeed), the store must still open, pass `git fsck --strict` and hold
/// every version it held; with the filler removed, the same command succeeds.
@Suite(.timeLimit(.minutes(10)), .serialized, .enabled(if: geteuid() == 0, "mounting a tmpfs needs root"))
struct FullDiskTests {
    /// A tmpfs of `megabytes` mounted on a new directory, a file that fills it, and the unmount.
    final class FullDisk {
        private let parent = TemporaryDirectory("truce-full-disk")
        let directory: String
        var filler: String { directory + "/filler" }

        init(megabytes: Int = 16) throws {
            directory = parent.file("disk")
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let mounted = try run("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", directory])
            guard mounted.status == 0 else { throw ReliabilityFailure("mount tmpfs: \(mounted.errorOutput)") }
        }

        /// Writes zeros into the filler until the file system refuses another byte.
        func fill() throws {
            // O_CLOEXEC: a server another test starts meanwhile would otherwise inherit the filler, and its blocks
            // would stay taken after `makeRoom` unlinks it (a resolution failed "with room" that way in a full run).
            let descriptor = open(filler, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else { throw ReliabilityFailure("cannot create \(filler)") }
            defer { close(descriptor) }
            var chunk = 1 << 20
            let zeros = [UInt8](repeating: 0, count: chunk)
            while chunk > 0 {
                if zeros.withUnsafeBytes({ write(descriptor, $0.baseAddress, chunk) }) < 0 {
                    guard errno == ENOSPC else { throw ReliabilityFailure("filling: \(String(cString: strerror(errno)))") }
                    chunk /= 2
                }
            }
        }

        func makeRoom() throws { try FileManager.default.removeItem(atPath: filler) }

        deinit {
            if (try? run("/usr/bin/umount", [directory]))?.status != 0 { _ = try? run("/usr/bin/umount", ["-l", directory]) }
        }
    }

    /// What must not change when a write fails: the versions heads reach, and a clean fsck.
    struct Acknowledged: Equatable {
        let versions: Set<String>
        let fsck: [String]

        init(of store: String) throws {
            versions = try Reliability.reachableVersions(in: store)
            fsck = try Reliability.fsckProblems(store)
        }
    }

    @Test(arguments: StoreWriter.allCases) func aWriterOnAFullDiskFailsWithOneLineKeepsEverythingAndWorksOnceThereIsRoom(_ writer: StoreWriter) throws
    {
        let setup = try writer.prepare()
        let disk = try FullDisk()
        let store = disk.directory + "/store"
        #expect(try run("/bin/cp", ["-a", setup.store, store]).status == 0)
        if writer.dropsDeletedDocuments {
            // Enough that the repack cannot fit in what prune frees before it (the refs it drops, the reflogs it trims).
            var random = SeededRandom(seed: 0xF011)
            let big = Data((0..<(2 << 20)).map { _ in UInt8(truncatingIfNeeded: random.next()) })
            #expect(try truce(["save", "big.bin", "-"], store: store, input: big).status == 0)
        }
        let before = try Acknowledged(of: store)
        #expect(before.fsck == [] && !before.versions.isEmpty)

        try disk.fill()
        let full = try truce(setup.arguments, store: store, input: setup.input, environment: setup.environment)
        if writer == .loggedSave {
            // The log grows a mebibyte at a time, so a record fits where the disk is already the log's: durable on return,
            // its id printed. Landing it in git when the process ends is refused by the full disk, silently: readers
            // serve it from the log, and the next writer with room lands it.
            #expect(full.status == 0, "a logged save on a full disk exited \(full.status): \(full.errorOutput)")
            #expect(Reliability.savedID(full.output) != nil, "\(full.output)")
            #expect(full.errorOutput.isEmpty, "\(full.errorOutput)")
            let read = try truce(["cat", "a.md"], store: store)
            #expect(read.status == 0 && read.output == String(decoding: setup.input, as: UTF8.self), "\(read.errorOutput)")
        } else {
            #expect(full.status == 3, "\(writer.rawValue) on a full disk exited \(full.status): \(full.errorOutput)")
            #expect(full.errorLines.count == 1, "\(writer.rawValue): \(full.errorOutput)")
            #expect(
                full.errorLines.first?.hasPrefix("truce: ") == true && full.errorLines.first?.contains("No space left on device") == true,
                "\(writer.rawValue): \(full.errorOutput)")
        }
        // Still full: the store opens and reads (reading never writes), holds what it held, and fsck is clean.
        let opened = try truce(["versions", "a.md"], store: store)
        #expect(opened.status == 0, "\(opened.errorOutput)")
        let stillFull = try Acknowledged(of: store)
        #expect(stillFull.fsck == [], "\(writer.rawValue): \(stillFull.fsck)")
        // A prune that failed dropped nothing it would not drop whole: the refs of a deleted document, at most.
        let mustStay = writer.dropsDeletedDocuments ? before.versions.filter { !deletedDocumentVersions(of: setup).contains($0) } : before.versions
        #expect(mustStay.isSubset(of: stillFull.versions), "\(writer.rawValue) lost \(mustStay.subtracting(stillFull.versions))")

        try disk.makeRoom()
        let roomy = try truce(setup.arguments, store: store, input: setup.input, environment: setup.environment)
        #expect(roomy.status == 0, "\(writer.rawValue) with room: \(roomy.errorOutput)")
        let after = try Acknowledged(of: store)
        #expect(after.fsck == [], "\(writer.rawValue): \(after.fsck)")
        let kept = writer.dropsDeletedDocuments ? after.versions.intersection(before.versions) : before.versions
        #expect(kept.isSubset(of: after.versions))
        #expect(try truce(["save", "after.txt", "-"], store: store, input: .text("after\n")).status == 0)
        if writer == .loggedSave {
            // The save acknowledged on the full disk is in git now.
            let id = full.output.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(after.versions.contains(id), "the logged save \(id) acknowledged on the full disk was lost")
        }
    }

    /// The versions of the documents `setup`'s store holds only as deletions: what a prune may drop.
    func deletedDocumentVersions(of setup: StoreWriter.Setup) -> Set<String> {
        let log = (try? git(["-C", setup.store, "log", "--format=%H", "--glob=refs/truce/heads", "--", "gone.txt"]))?.output ?? ""
        return Set(log.split(separator: "\n").map(String.init))
    }

    @Test func initOnAFullDiskLeavesNothingOrIsCompletedByTheNextInit() throws {
        let disk = try FullDisk(megabytes: 2)
        let store = disk.directory + "/store"
        try disk.fill()
        let full = try truce(["init"], store: store)
        #expect(full.status == 3, "init on a full disk exited \(full.status): \(full.errorOutput)")
        #expect(full.errorLines.count == 1 && full.errorLines.first?.hasPrefix("truce: ") == true, "\(full.errorOutput)")
        let left = (try? FileManager.default.contentsOfDirectory(atPath: store)) ?? []
        // Nothing another command would take for a store, or a store only `init` finishes.
        #expect(try truce(["status"], store: store).status != 0, "a half-made store opened")
        try disk.makeRoom()
        let again = try truce(["init"], store: store)
        #expect(again.status == 0, "the next init, with room, after leaving \(left): \(again.errorOutput)")
        #expect(try truce(["save", "a.md", "-"], store: store, input: .text("a\n")).status == 0)
        #expect(try Reliability.fsckProblems(store) == [])
        #expect(try git(["-C", store, "config", "truce.version"]).output == "1\n")
    }

    /// A first push whose pack is megabytes long, into a hub on a full disk: each megabyte is hashed and written on
    /// another thread while the next fills, and the write refused there fails the push with one line (a hub that refuses
    /// the push, exit 2). The hub keeps no
    /// part of a pack and moves no reference, the store moves nothing, and with room the same sync completes.
    @Test func aPushIntoAHubOnAFullDiskFailsWithOneLineAndLeavesNoPackPartBehind() throws {
        let store = try CLIStore()
        var random = SeededRandom(seed: 0xF1_11)
        var stream = Data()
        for index in 0..<300 {
            // Random bytes, which deflate cannot shrink: the pack is about 2.5 MB, several flushes.
            let body = Data((0..<8192).map { _ in UInt8(truncatingIfNeeded: random.next()) })
            stream += Data("M 100644 inline d/\(index).bin\ndata \(body.count)\n".utf8) + body + Data("\n".utf8)
        }
        #expect(try store.run(["import", "-"], input: stream).status == 0)
        let disk = try FullDisk(megabytes: 16)
        let hub = disk.directory + "/hub.git"
        #expect(try git(["init", "-q", "--bare", hub]).status == 0)
        let storeBefore = snapshot(ofStore: store.path)
        try disk.fill()
        let full = try store.run("sync", hub)
        // The hub's disk, not the store's: a remote that refuses the push, exit 2.
        #expect(full.status == 2, "a push into a full hub exited \(full.status): \(full.errorOutput)")
        #expect(full.errorLines.count == 1 && full.errorLines.first?.contains("No space left on device") == true, "\(full.errorOutput)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: hub + "/objects/pack").isEmpty)
        #expect(try git(["-C", hub, "for-each-ref"]).output.isEmpty)
        #expect(snapshot(ofStore: store.path) == storeBefore)

        try disk.makeRoom()
        let roomy = try store.run("sync", hub)
        #expect(roomy.status == 0, "the sync with room: \(roomy.errorOutput)")
        #expect(try git(["-C", hub, "fsck", "--strict", "--no-dangling"]).status == 0)
        #expect(try git(["-C", hub, "count-objects", "-v"]).output.contains("size-pack: 2"))
    }
}
