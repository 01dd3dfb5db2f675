import Foundation
import TestSupport
import Testing

@testable import TruceGit

/// A staging that spills packs one while the next is staged, and whose `flush` returns only once every object staged
/// is in an installed pack, or throws what a spill failed with.
@Suite(.timeLimit(.minutes(10))) struct ObjectStagingTests {
    typealias Fixture = PackWriterTests.Fixture

    /// Blobs enough to pass the spill's byte limit: four of a quarter of it and a little more, each its own bytes.
    static func spillingBlobs(_ staging: ObjectStaging) -> [ObjectID] {
        (0..<4).map { index in
            var content = Data(repeating: UInt8(ascii: "a") + UInt8(index), count: ObjectStaging.spillLimit.bytes / 4 + 1)
            content.append(contentsOf: Array("blob \(index)\n".utf8))
            return staging.writeBlob(content)
        }
    }

    @Test func aSpillStaysReadableUntilItsPackIsInAndFlushWaitsForIt() throws {
        let fixture = try Fixture()
        let repository = try Repository.openBare(at: fixture.path)
        let staging = ObjectStaging()
        let spilled = Self.spillingBlobs(staging)
        #expect(try staging.spillIfFull(into: repository))
        #expect(staging.count == 0)
        // Handed to the spill, not yet known to be in a pack: the staging still answers for each.
        for id in spilled { #expect(staging.object(id)?.type == RawObject.blobType, "spilled blob \(id) is not readable") }
        let after = staging.writeBlob(.text("after the spill\n"))
        let tree = staging.writeTree(spilled.enumerated().map { TreeEntry(name: "b\($0.offset)", id: $0.element, isTree: false) })
        let signature = PackWriterTests.signature
        let commit = try staging.writeCommit(tree: tree, parents: [], author: signature, committer: signature, message: "m\n")
        #expect(try staging.flush(into: repository) == spilled.count + 3)
        // Both packs are installed once flush returns: the spill's and the one flush wrote.
        #expect(try fixture.packs().count == 2)
        #expect(try fixture.fsckFindings().isEmpty)
        for id in spilled + [after, tree, commit] { #expect(try fixture.git("cat-file", "-t", id.hex).status == 0) }
        #expect(try fixture.git("cat-file", "-p", commit.hex).output.hasPrefix("tree \(tree.hex)\n"))
    }

    @Test func aSpillThatFailedIsThrownByTheFlushAfterIt() throws {
        let fixture = try Fixture()
        let repository = try Repository.openBare(at: fixture.path)
        // No directory to write the spill's pack into: the write on the other thread fails.
        let packDirectory = fixture.path + "/objects/pack"
        try FileManager.default.removeItem(atPath: packDirectory)
        let staging = ObjectStaging()
        _ = Self.spillingBlobs(staging)
        #expect(try staging.spillIfFull(into: repository))
        let error = #expect(throws: GitError.self) { try staging.flush(into: repository) }
        #expect(error?.operation.contains("tmp_pack_truce") == true, "not the spill's failure: \(String(describing: error))")
        #expect(!FileManager.default.fileExists(atPath: packDirectory))
    }
}
