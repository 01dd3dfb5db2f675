internal import CGitShim
import Foundation

/// The zlib streams a pack's objects are deflated with, kept across objects (`compress2` set up and cleared 256 KiB
/// of zlib state for each).
///
/// Two streams: objects shorter than `smallObjectLimit` (a version's commit,
/// trees and most documents) go through one whose hash table is 4 KiB, the
/// others through one at zlib's default 64 KiB. zlib clears the table at
/// every reset, and at 64 KiB that was most of the cost of deflating a small
/// object; below the limit both streams make the same bytes
/// (`ObjectDeflationTests`). A stored stream (level 0) never reads its
/// table: both keep the smallest.
final class Deflater: @unchecked Sendable {
    // @unchecked: the streams are zlib state, used by one thread at a time (`ParallelDeflation` gives each worker its own).
    private let small: OpaquePointer
    private let large: OpaquePointer

    /// Below this many bytes an object goes through the small stream: fewer than the 1,024 symbols a block of it holds.
    let smallObjectLimit: Int

    /// Streams at zlib `level`: -1 for its default (as git deflates), 0 to store; objects below `smallObjectLimit`
    /// bytes go through the small one (a test sends none).
    init(level: Int32, smallObjectLimit: Int = 1000) throws(GitError) {
        self.smallObjectLimit = smallObjectLimit
        guard let small = truce_deflater_new(level, level == 0 ? 1 : 4) else { throw Self.outOfMemory }
        guard let large = truce_deflater_new(level, level == 0 ? 1 : 8) else {
            truce_deflater_free(small)
            throw Self.outOfMemory
        }
        (self.small, self.large) = (small, large)
    }

    deinit {
        truce_deflater_free(small)
        truce_deflater_free(large)
    }

    /// `data` as one zlib stream; `id` names the object in an error.
    func deflate(_ data: UnsafeRawBufferPointer, id: ObjectID) throws(GitError) -> [UInt8] {
        let stream = data.count < smallObjectLimit ? small : large
        var status: Int32 = 0
        // Uninitialized: the bound is more than deflate writes, and pages never written are never resident (a 50 MB
        // document would otherwise cost 50 MB more at its peak than libgit2's pack builder did).
        let out = [UInt8](unsafeUninitializedCapacity: truce_deflater_bound(stream, data.count)) { buffer, count in
            var length = buffer.count
            status = truce_deflater_deflate(stream, buffer.baseAddress, &length, data.baseAddress?.assumingMemoryBound(to: UInt8.self), data.count)
            count = status == 0 ? length : 0
        }
        guard status == 0 else { throw GitError(operation: "compress object \(id)", code: -1, errorClass: 0, message: "zlib status \(status)") }
        return out
    }

    private static let outOfMemory = GitError(operation: "compress objects", code: -1, errorClass: 0, message: "out of memory")
}

/// Deflating a run of a pack's objects on every core, each worker with its own `Deflater`, while the pack itself is
/// written in order on one.
///
/// Deflating was the largest part of writing a big pack (an import's, a first
/// sync's), and objects deflate independently. Only objects held in memory
/// are deflated here; whatever is not (an object to read from the store, one
/// that failed) is left for the writer's own path, which reports errors.
struct ParallelDeflation: Sendable {
    private let deflaters: [Deflater]

    /// Workers for every active core (at most `limit`), deflating at zlib `level`.
    init(level: Int32, limit: Int = 8) throws(GitError) {
        let workers = max(1, min(limit, ProcessInfo.processInfo.activeProcessorCount))
        var deflaters: [Deflater] = []
        for _ in 0..<workers { deflaters.append(try Deflater(level: level)) }
        self.deflaters = deflaters
    }

    /// How many objects run at once: with one worker, none run ahead of the writer.
    var workers: Int { deflaters.count }

    /// The deflated bytes of each of `objects`, in order; nil where there is no object. `ids` (as many) name them.
    func deflate(_ objects: [RawObject?], ids: ArraySlice<ObjectID>) -> [[UInt8]?] {
        let ids = Array(ids)
        var bodies = [[UInt8]?](repeating: nil, count: objects.count)
        bodies.withUnsafeMutableBufferPointer { bodies in
            // Each worker writes only the places `index % workers` gives it.
            nonisolated(unsafe) let bodies = bodies
            DispatchQueue.concurrentPerform(iterations: deflaters.count) { worker in
                for index in stride(from: worker, to: objects.count, by: deflaters.count) {
                    guard let raw = objects[index] else { continue }
                    bodies[index] = raw.bytes.withUnsafeBytes { try? deflaters[worker].deflate($0, id: ids[index]) }
                }
            }
        }
        return bodies
    }
}
