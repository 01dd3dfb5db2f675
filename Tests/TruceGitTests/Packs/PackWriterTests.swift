import Foundation
import TestSupport
import Testing

@testable import TruceGit

/// A pack `PackWriter` writes is one git accepts, holds exactly the objects given, and is written without reading refs.
@Suite(.timeLimit(.minutes(10))) struct PackWriterTests {
    /// A bare repository in a temporary directory, with git run on it as the oracle.
    final class Fixture {
        let directory = TemporaryDirectory("truce-pack")
        var path: String { directory.file("repo.git") }

        init() throws { _ = try Repository.createBare(at: directory.file("repo.git")) }

        func git(_ arguments: String...) throws -> ProcessResult {
            let result = try TestSupport.git(["-C", path] + arguments)
            try #require(result.status == 0, "git \(arguments.joined(separator: " ")) failed: \(result.errorOutput)")
            return result
        }

        /// What `git fsck --strict` finds, past its notices that a repository with no refs has no refs.
        func fsckFindings() throws -> [String] {
            let result = try git("fsck", "--strict", "--no-dangling")
            return (result.output + result.errorOutput).split(separator: "\n").map(String.init).filter { !$0.hasPrefix("notice: ") }
        }

        func packs() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: path + "/objects/pack").filter { $0.hasSuffix(".pack") }.sorted()
        }
    }

    static func randomBytes(_ count: Int, seed: UInt64) -> Data {
        var random = SeededRandom(seed: seed)
        return Data((0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) })
    }

    static let signature = Signature(name: "Ada", email: "ada@example.com", time: 1_796_000_000, offsetMinutes: 60)

    /// A blob per content, a tree naming them and a commit of it, written to memory by `bulk` and recorded to pack.
    static func recordCommit(
        of contents: [String: Data], in bulk: MemoryRepository
    ) throws -> (blobs: [String: ObjectID], tree: ObjectID, commit: ObjectID) {
        var blobs: [String: ObjectID] = [:]
        for (name, bytes) in contents.sorted(by: { $0.key < $1.key }) {
            blobs[name] = try bulk.repository.writeBlob(bytes)
            bulk.record(blobs[name]!)
        }
        let tree = try bulk.repository.writeTree(blobs.map { TreeEntry(name: $0.key, id: $0.value, isTree: false) })
        bulk.record(tree)
        let commit = try bulk.repository.writeCommit(tree: tree, parents: [], author: signature, committer: signature, message: "m\n")
        bulk.record(commit)
        return (blobs, tree, commit)
    }

    /// Blobs empty, small, over one 64 KiB block and over 1 MiB (random, so deflate cannot shrink them under those
    /// sizes, and one compressible), a tree naming them and a commit of it: written to memory, then packed, deflated
    /// at each level: git's, the fastest (a journal's batch file), or stored as a save log checkpoint stores them.
    @Test(arguments: [PackCompression.standard, .fastest, .stored])
    func aPackHoldsExactlyTheGivenObjectsAndGitAcceptsIt(compression: PackCompression) throws {
        let fixture = try Fixture()
        let bulk = try MemoryRepository(path: fixture.path)
        let contents: [String: Data] = [
            "empty": Data(), "small": .text("one line\n"), "small-random": Self.randomBytes(3000, seed: 3),
            "over-64k": Self.randomBytes(70_000, seed: 1),
            "over-1m": Self.randomBytes(1_500_000, seed: 2), "compressible": Data(repeating: 0x61, count: 3 << 20),
        ]
        let (blobs, tree, commit) = try Self.recordCommit(of: contents, in: bulk)
        bulk.record(blobs["small"]!)  // recorded twice, packed once
        #expect(try fixture.packs().isEmpty)
        #expect(try bulk.flush(compression: compression) == contents.count + 3)

        let packs = try fixture.packs()
        try #require(packs.count == 1, "packs: \(packs)")
        let verified = try fixture.git("verify-pack", "-v", "objects/pack/" + packs[0]).output
        var listed: [ObjectID: String] = [:], sizeInPack: [ObjectID: Int] = [:]
        for line in verified.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if fields.count >= 2, let id = ObjectID(hex: String(fields[0])) { listed[id] = String(fields[1]) }
            if fields.count >= 4, let id = ObjectID(hex: String(fields[0])) { sizeInPack[id] = Int(fields[3]) }
        }
        // Three megabytes of one byte: deflated to a few kilobytes at either level, stored whole.
        let compressible = try #require(sizeInPack[blobs["compressible"]!])
        #expect(compression == .stored ? compressible > 3 << 20 : compressible < 64 << 10, "\(compressible) bytes in the pack")
        var expected = Dictionary(uniqueKeysWithValues: blobs.values.map { ($0, "blob") })
        expected[tree] = "tree"
        expected[commit] = "commit"
        #expect(listed == expected, "verify-pack -v:\n\(verified)")
        #expect(verified.contains(": ok"))
        #expect(try fixture.git("count-objects", "-v").output.contains("count: 0\n"), "objects were written loose")
        #expect(try fixture.fsckFindings().isEmpty)
        #expect(try fixture.git("cat-file", "-p", tree.hex).output.split(separator: "\n").count == contents.count)
        #expect(try fixture.git("cat-file", "-p", commit.hex).output.hasPrefix("tree \(tree.hex)\n"))
        for (name, id) in blobs {
            #expect(try fixture.git("cat-file", "blob", id.hex).stdout == contents[name], "blob \(name) reads back otherwise")
            // The memory store is empty now: the handle reads the blob from the new pack.
            #expect(try bulk.repository.readBlob(id) == contents[name])
        }
        #expect(try PackWriter(repository: bulk.repository).write([]) == nil)
        #expect(try fixture.packs().count == 1, "an empty write made a pack")
    }

    /// A pack of thousands of objects, deflated side by side on every core, is one git verifies, and each object reads
    /// back as written, across runs that end at 4,096 objects and at 16 MiB.
    @Test func aPackDeflatedSideBySideHoldsEveryObjectAsWritten() throws {
        let fixture = try Fixture()
        let repository = try Repository.openBare(at: fixture.path)
        // Staged as a batch of saves stages them: in memory, which is what is deflated side by side.
        let staging = ObjectStaging()
        var contents: [String: Data] = [:], blobs: [String: ObjectID] = [:]
        for index in 0..<5000 {
            contents["doc\(index)"] = .text("document \(index)\n" + String(repeating: "line \(index % 97)\n", count: index % 300))
        }
        for index in 0..<3 { contents["big\(index)"] = Self.randomBytes(7_000_000, seed: UInt64(10 + index)) }
        for (name, content) in contents { blobs[name] = staging.writeBlob(content) }
        let tree = staging.writeTree(blobs.map { TreeEntry(name: $0.key, id: $0.value, isTree: false) })
        let commit = try staging.writeCommit(tree: tree, parents: [], author: Self.signature, committer: Self.signature, message: "m\n")
        #expect(try staging.flush(into: repository) == contents.count + 2)
        let packs = try fixture.packs()
        try #require(packs.count == 1, "packs: \(packs)")
        #expect(try fixture.git("verify-pack", "objects/pack/" + packs[0]).status == 0)
        #expect(try fixture.fsckFindings().isEmpty)
        #expect(try fixture.git("cat-file", "-p", commit.hex).output.hasPrefix("tree \(tree.hex)\n"))
        let batch = blobs.sorted { $0.key < $1.key }
        let read = try TestSupport.git(["-C", fixture.path, "cat-file", "--batch"], input: Data(batch.map { $0.value.hex + "\n" }.joined().utf8))
        var output = read.stdout[...]
        for (name, id) in batch {
            let header = output.prefix { $0 != 0x0A }
            let size = Int(String(decoding: header.split(separator: 0x20).last!, as: UTF8.self))!
            let body = output.dropFirst(header.count + 1).prefix(size)
            #expect(String(decoding: header, as: UTF8.self).hasPrefix(id.hex + " blob "))
            #expect(Data(body) == contents[name], "blob \(name) reads back otherwise")
            output = output.dropFirst(header.count + 1 + size + 1)
        }
    }

    /// Objects written straight into memory (a logged save's) are the bytes libgit2 writes: the same ids, and a pack
    /// of them that git verifies.
    @Test func objectsWrittenStraightIntoMemoryAreTheOnesLibgit2Writes() throws {
        let fixture = try Fixture(), oracle = try Fixture()
        let bulk = try MemoryRepository(path: fixture.path)
        let reference = try Repository.openBare(at: oracle.path)
        let content = Data("a document\nwith two lines\n".utf8)
        let blob = try bulk.writeBlob(content)
        #expect(blob == (try reference.writeBlob(content)))
        // Entries out of git's order, and a tree beside a blob of a name it prefixes: git sorts a tree as "name/".
        let subtree = try bulk.writeTree([TreeEntry(name: "leaf.txt", id: blob, isTree: false)])
        #expect(subtree == (try reference.writeTree([TreeEntry(name: "leaf.txt", id: blob, isTree: false)])))
        let entries = [
            TreeEntry(name: "b", id: blob, isTree: false), TreeEntry(name: "a", id: subtree, isTree: true),
            TreeEntry(name: "a.txt", id: blob, isTree: false), TreeEntry(name: "a-b", id: subtree, isTree: true),
        ]
        let tree = try bulk.writeTree(entries)
        #expect(tree == (try reference.writeTree(entries)))
        let other = Signature(name: "Bob", email: "bob@example.com", time: 1_796_000_100, offsetMinutes: -330)
        let root = try bulk.writeCommit(tree: tree, parents: [], author: Self.signature, committer: other, message: "one\n\nbody\n")
        #expect(root == (try reference.writeCommit(tree: tree, parents: [], author: Self.signature, committer: other, message: "one\n\nbody\n")))
        let child = try bulk.writeCommit(tree: subtree, parents: [root], author: other, committer: other, message: "two")
        #expect(child == (try reference.writeCommit(tree: subtree, parents: [root], author: other, committer: other, message: "two")))
        #expect(try bulk.takeRecorded().count == 5)
        for id in [blob, subtree, tree, root, child] { bulk.record(id) }
        #expect(try bulk.flush(compression: .stored) == 5)
        let packs = try fixture.packs()
        try #require(packs.count == 1)
        #expect(try fixture.git("verify-pack", "objects/pack/" + packs[0]).status == 0)
        #expect(try fixture.git("rev-list", "--objects", child.hex).output.split(separator: "\n").count == 5)
        #expect(try fixture.fsckFindings().isEmpty)
    }

    /// The name returned is the pack's, and a second pack of objects already packed is one git accepts beside the first.
    @Test func theNameReturnedIsThePacksAndObjectsCanBePackedAgain() throws {
        let fixture = try Fixture()
        let bulk = try MemoryRepository(path: fixture.path)
        let blob = try bulk.repository.writeBlob(.text("again\n"))
        let writer = PackWriter(repository: bulk.repository)
        let first = try #require(try writer.write([blob]))
        #expect(try fixture.packs() == [first + ".pack"])
        let tree = try bulk.repository.writeTree([TreeEntry(name: "a", id: blob, isTree: false)])
        let second = try #require(try writer.write([tree, blob]))
        #expect(try fixture.packs() == [first, second].sorted().map { $0 + ".pack" })
        #expect(Set(bulk.repository.objectIDs(inPack: fixture.path + "/objects/pack/" + second + ".pack") ?? []) == [tree, blob])
        #expect(try fixture.fsckFindings().isEmpty)
    }

    /// A writer of held objects only (a spill's, on another thread) packs what it is handed, and refuses an object it
    /// is not, leaving no file behind, where a repository's writer would read it from the store.
    @Test func aWriterOfHeldObjectsRefusesOneNotHeldAndLeavesNoFile() throws {
        let fixture = try Fixture()
        let bulk = try MemoryRepository(path: fixture.path)
        let stored = try bulk.repository.writeBlob(.text("only in the store\n"))
        let held = RawObject(type: RawObject.blobType, bytes: Array("held in memory\n".utf8))
        let heldID = ObjectID.blobHash(of: held.bytes)
        let writer = PackWriter(heldObjectsInto: fixture.path + "/objects/pack/")
        #expect(throws: GitError.self) { try writer.write([stored], known: [:]) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.path + "/objects/pack").isEmpty)
        #expect(try PackWriter(repository: bulk.repository).write([stored]) != nil)
        #expect(try writer.write([heldID], known: [heldID: held]) != nil)
        #expect(try fixture.packs().count == 2)
        #expect(try fixture.git("cat-file", "blob", heldID.hex).output == "held in memory\n")
        #expect(try fixture.fsckFindings().isEmpty)
    }

    /// libgit2's pack builder lists every reference on each write and fails on a tag it cannot resolve; the pack
    /// writer reads no reference, so the same write succeeds.
    @Test func writingAPackReadsNoReference() throws {
        let fixture = try Fixture()
        let tags = fixture.path + "/refs/tags"
        try FileManager.default.createDirectory(atPath: tags, withIntermediateDirectories: true)
        try Data("ref: refs/heads/nowhere\n".utf8).write(to: URL(fileURLWithPath: tags + "/dangling"))
        let bulk = try MemoryRepository(path: fixture.path)
        let blob = try bulk.repository.writeBlob(.text("packed without reading refs\n"))
        // The control: the pack builder trips over the reference, so the test can tell the two apart.
        #expect(throws: GitError.self) { try bulk.repository.writePack(of: [blob], progress: { _, _ in }) }
        bulk.record(blob)
        #expect(try bulk.flush() == 1)
        #expect(try fixture.packs().count == 1)
        #expect(try fixture.git("cat-file", "blob", blob.hex).output == "packed without reading refs\n")
    }

    /// An index longer than the megabyte it is written by at a time, with offsets past 2 GiB, is one git reads: `git
    /// show-index` lists each id with its offset and CRC, and its last 20 bytes are the SHA-1 of those before.
    @Test func anIndexWrittenAMegabyteAtATimeIsOneGitReads() throws {
        var random = SeededRandom(seed: 48)
        var entries = (0..<50_000).map { position in
            PackIndex.Entry(
                id: ObjectID(bytes: (0..<20).map { _ in UInt8(truncatingIfNeeded: random.next()) }[...]),
                crc: UInt32(truncatingIfNeeded: random.next()),
                // Every thousandth past 2 GiB, in the table of 64-bit offsets.
                offset: position % 1000 == 7 ? (5 << 30) + UInt64(position) : 12 + 40 * UInt64(position))
        }
        let expected = entries.map { "\($0.offset) \($0.id.hex) (\(String(format: "%08x", $0.crc)))" }.sorted()
        let checksum = [UInt8](repeating: 0xAB, count: 20)
        var index: [UInt8] = []
        var writes = 0
        try PackIndex.write(&entries, packChecksum: checksum) { bytes in
            index += bytes
            writes += 1
        }
        #expect(index.count > 1 << 20 && writes > 2)
        let listed = try TestSupport.git(["show-index"], input: Data(index))
        try #require(listed.status == 0, "\(listed.errorOutput)")
        #expect(listed.output.split(separator: "\n").map(String.init).sorted() == expected)
        var sha = SHA1()
        sha.update(Array(index.dropLast(20)))
        #expect(Array(index.suffix(40)) == checksum + sha.finalize())
    }
}
