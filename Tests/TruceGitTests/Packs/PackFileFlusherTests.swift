import Foundation
import TestSupport
import Testing

@testable import TruceGit

/// A pack's megabytes hashed and written on the flusher's queue: the file and the hash are the bytes in order, and a
/// write the queue failed fails the wait that follows it.
@Suite(.timeLimit(.minutes(10))) struct PackFileFlusherTests {
    static func megabyte(_ seed: UInt64) -> [UInt8] {
        var random = SeededRandom(seed: seed)
        return (0..<(1 << 20)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    }

    @Test func theFileAndTheHashAreTheBytesInOrder() throws {
        let directory = TemporaryDirectory("truce-flusher")
        let path = directory.file("pack")
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let flusher = PackFileFlusher()
        let chunks = [Self.megabyte(1), Self.megabyte(2), Self.megabyte(3)]
        for chunk in chunks {
            try flusher.finished()
            flusher.start(chunk, to: descriptor, path: path)
        }
        try flusher.finished()
        let all = chunks.flatMap { $0 }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(all))
        var whole = SHA1()
        all.withUnsafeBytes { whole.update($0) }
        #expect(flusher.sha.finalize() == whole.finalize())
    }

    /// `/dev/full` refuses every write with ENOSPC, as a full disk does.
    @Test func aWriteTheQueueFailedFailsTheNextWait() throws {
        let descriptor = open("/dev/full", O_WRONLY | O_CLOEXEC)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let flusher = PackFileFlusher()
        flusher.start(Self.megabyte(4), to: descriptor, path: "/dev/full")
        #expect(throws: GitError.self) { try flusher.finished() }
        // Reported once: the wait after it has nothing to report.
        try flusher.finished()
    }
}
