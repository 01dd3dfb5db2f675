import Foundation

/// A pack's bytes hashed and written on another thread, a megabyte at a time, while the writer fills the next: the
/// SHA-1 of a first push's 30 MB pack was a sixth of its copy.
///
/// One thread at a time touches `sha` and the file: the writer's between `finished()` and `start`, the queue's from
/// `start` until `finished()` returns.
final class PackFileFlusher: @unchecked Sendable {
    var sha = SHA1()
    private let queue = DispatchQueue(label: "truce.pack-file")
    private let group = DispatchGroup()
    private var failure: GitError?

    /// Hashes `bytes`, then writes them to `descriptor`, on the queue.
    func start(_ bytes: [UInt8], to descriptor: Int32, path: String) {
        queue.async(group: group) { [self] in
            bytes.withUnsafeBytes { sha.update($0) }
            do throws(GitError) {
                try DurableFiles.writeAll(bytes, to: descriptor, path: path)
            } catch {
                failure = error
            }
        }
    }

    /// Waits for the write under way, if any; throws what it failed with.
    func finished() throws(GitError) {
        group.wait()
        if let failure {
            self.failure = nil
            throw failure
        }
    }
}
