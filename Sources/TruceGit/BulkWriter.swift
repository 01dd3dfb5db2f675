internal import CLibgit2

/// A second handle on a repository whose new objects go to memory, then all at once into one pack.
///
/// The bulk path, as `git fast-import` does it: writing thousands of loose
/// objects costs an fsync each, one pack costs one. Objects written through
/// `repository` exist only in memory until `flush()` packs them; a crash
/// before that loses the batch, never anything acknowledged.
package final class BulkWriter {
    /// The handle to write through (and to read back what was written).
    package let repository: Repository
    private let backend: UnsafeMutablePointer<git_odb_backend>
    private var written: [ObjectID] = []

    package init(path: String) throws(GitError) {
        repository = try Repository.openBare(at: path)
        var backend: UnsafeMutablePointer<git_odb_backend>?
        try check(git_mempack_new(&backend), "start in-memory object store")
        // Above the loose and pack backends, so every write lands here.
        try repository.attach(backend, priority: 1000, "in-memory object store")
        self.backend = backend!
    }

    /// Notes that `id` was written through `repository` and must go into the pack.
    package func record(_ id: ObjectID) { written.append(id) }

    /// Writes every recorded object into one pack (fsynced) and empties memory; returns the number packed.
    @discardableResult
    package func flush() throws(GitError) -> Int {
        guard !written.isEmpty else { return 0 }
        // Not libgit2's pack builder: it reads every reference in the store on each write (see `PackWriter`).
        try PackWriter(repository: repository).write(written)
        let count = written.count
        written.removeAll()
        try check(git_mempack_reset(backend), "empty in-memory object store")
        return count
    }
}
