internal import CGitShim
internal import CLibgit2

extension Repository {
    /// Object `id` as `odb`'s backends hold it, its id verified, read past libgit2's object cache (see
    /// `uncached_read.c`); nil when no backend holds it as it stands (`git_odb_read` then also looks for new packs).
    func readPastCache(_ id: ObjectID, in odb: OpaquePointer?) throws(GitError) -> (type: Int32, bytes: [UInt8])? {
        var oid = id.raw
        var data: UnsafeMutableRawPointer?
        var length = 0
        var type: Int32 = 0
        var owner: UnsafeMutablePointer<git_odb_backend>?
        let code = truce_odb_read_uncached(&data, &length, &type, &owner, odb, &oid)
        if code == GIT_ENOTFOUND.rawValue { return nil }
        try check(code, "read object \(id)")
        defer { truce_odb_data_free(owner, data) }
        return (type, data.map { Array(UnsafeRawBufferPointer(start: $0, count: length)) } ?? [])
    }
}
