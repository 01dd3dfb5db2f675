import Foundation
import Synchronization
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

    /// Set on one thread, read on another.
    final class Flag: Sendable {
        private let value = Atomic<Bool>(false)
        var isSet: Bool { value.load(ordering: .sequentiallyConsistent) }
        func set() { value.store(true, ordering: .sequentiallyConsistent) }
    }

    @Test func aSpillStaysReadableUntilItsPackIsInAndFlushWaitsForIt() throws {
        let fixture = try Fixture()
        // The spill's write is held until the test lets it go, so that what the staging does meanwhile is seen.
        let instrumentation = Instrumentation(), gate = DispatchSemaphore(value: 0), released = Flag()
        instrumentation.beforeWritingASpill { gate.wait() }
        let repository = try Repository.openBare(at: fixture.path, instrumentation: instrumentation)
        let staging = ObjectStaging()
        let spilled = Self.spillingBlobs(staging)
        #expect(try staging.spillIfFull(into: repository))
        #expect(staging.count == 0)
        // Handed to the spill, not in any pack yet: the staging still answers for each.
        #expect(try fixture.packs().isEmpty)
        for id in spilled { #expect(staging.object(id)?.type == RawObject.blobType, "spilled blob \(id) is not readable") }
        let after = staging.writeBlob(.text("after the spill\n"))
        let tree = staging.writeTree(spilled.enumerated().map { TreeEntry(name: "b\($0.offset)", id: $0.element, isTree: false) })
        let signature = PackWriterTests.signature
        let commit = try staging.writeCommit(tree: tree, parents: [], author: signature, committer: signature, message: "m\n")
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) {
            released.set()
            gate.signal()
        }
        #expect(try staging.flush(into: repository) == spilled.count + 3)
        // flush returned only after the spill was let go and written: both packs are installed.
        #expect(released.isSet, "flush returned before the spill was written")
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
