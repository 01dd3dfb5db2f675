import Foundation
import TestSupport
import Testing

@testable import TruceGit

/// The small stream deflates a small object to the bytes zlib's default stream makes, and objects deflated side by
/// side are the ones deflated one after another.
@Suite struct ObjectDeflationTests {
    /// Small objects of every kind a store writes: text, random bytes, a tree's binary ids, a commit, empty.
    static func smallObjects() -> [[UInt8]] {
        var random = SeededRandom(seed: 7)
        var objects: [[UInt8]] = [[], Array("x".utf8)]
        for length in stride(from: 1, to: 1000, by: 7) {
            objects.append((0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) })
            let words = ["alpha ", "beta ", "gamma\n", "delta ", "lorem ", "ipsum\n"]
            objects.append(Array((0..<length).map { _ in words[Int(random.next() % 6)] }.joined().utf8.prefix(length)))
        }
        objects.append(Array("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor a <a@b> 1 +0000\n\nsave\n".utf8))
        return objects
    }

    @Test func theSmallStreamDeflatesAsZlibsDefaultStreamDoes() throws {
        let small = try Deflater(level: -1), large = try Deflater(level: -1, smallObjectLimit: 0)
        let id = ObjectID.blobHash(of: Data())
        for object in Self.smallObjects() {
            let bySmall = try object.withUnsafeBytes { bytes in try small.deflate(bytes, id: id) }
            let byLarge = try object.withUnsafeBytes { bytes in try large.deflate(bytes, id: id) }
            #expect(bySmall == byLarge, "an object of \(object.count) bytes deflates otherwise through the small stream")
        }
    }

    @Test func objectsDeflatedSideBySideAreTheOnesDeflatedInTurn() throws {
        let objects = Self.smallObjects() + [Array(repeating: 0x61, count: 300_000), Array(PackWriterTests.randomBytes(70_000, seed: 4))]
        var known: [ObjectID: RawObject] = [:]
        let ids = objects.map { object in
            let id = ObjectID.blobHash(of: Data(object))
            known[id] = RawObject(type: RawObject.blobType, bytes: object)
            return id
        }
        let missing = ObjectID.blobHash(of: Data("not held".utf8))
        let parallel = try ParallelDeflation(level: -1, limit: 4)
        let deflated = parallel.deflate((ids + [missing]).map { known[$0] }, ids: (ids + [missing])[...])
        let inTurn = try Deflater(level: -1)
        #expect(deflated.count == ids.count + 1)
        #expect(deflated.last! == nil, "an object not held was deflated")
        for (index, object) in objects.enumerated() {
            let expected = try object.withUnsafeBytes { bytes in try inTurn.deflate(bytes, id: ids[index]) }
            #expect(deflated[index] == expected, "object \(index) of \(object.count) bytes")
        }
    }
}
