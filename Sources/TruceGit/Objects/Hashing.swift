internal import CGitShim
internal import CLibgit2

extension ObjectID {
    /// The id git gives `bytes` as a blob: what `git hash-object --stdin` prints for them.
    package static func blobHash(of bytes: some Collection<UInt8>) -> ObjectID {
        Libgit2.ensureInitialized()
        var oid = git_oid()
        let data = Array(bytes)
        _ = data.withUnsafeBytes { git_odb_hash(&oid, $0.baseAddress, $0.count, GIT_OBJECT_BLOB) }
        return ObjectID(oid)
    }
}
