internal import CLibgit2
import Foundation

extension Repository {
    /// Every object id the reflogs of `names` mention, old and new values alike (git's prune keeps both).
    package func reflogIDs(of names: [String]) throws(GitError) -> Set<ObjectID> {
        var ids = Set<ObjectID>()
        for name in names where git_reference_has_log(handle, name) == 1 {
            var reflog: OpaquePointer?
            try check(git_reflog_read(&reflog, handle, name), "read reflog of \(name)")
            defer { git_reflog_free(reflog) }
            for index in 0..<git_reflog_entrycount(reflog) {
                guard let entry = git_reflog_entry_byindex(reflog, index) else { continue }
                ids.insert(ObjectID(git_reflog_entry_id_old(entry).pointee))
                ids.insert(ObjectID(git_reflog_entry_id_new(entry).pointee))
            }
        }
        return ids
    }

    /// The reference names of every reflog file under `logs/refs/`, including those whose reference no longer exists.
    ///
    /// libgit2 appends the reflog entry before it moves the reference, so a
    /// writer killed in between leaves a reflog without its reference. git
    /// reads those entries too (`git fsck` fails on one whose object is gone).
    package func reflogNames() -> [String] {
        // Lock files, and locks a stale-lock recovery took aside, are not reflogs.
        DirectoryWalk.files(under: gitDirectory + "logs/refs/").filter { !$0.hasSuffix(".lock") && !$0.contains(".lock.stale-") }
            .map { "refs/" + $0 }
    }

    /// Drops the entries of `name`'s reflog older than `cutoff` (seconds since 1970); returns how many were dropped.
    ///
    /// A reference without a reflog (a packed head) is left without one:
    /// libgit2's `git_reflog_read` creates an empty file, and the directories
    /// above it, for a reflog it does not find.
    @discardableResult
    package func expireReflog(of name: String, olderThan cutoff: Int64) throws(GitError) -> Int {
        guard git_reference_has_log(handle, name) == 1 else { return 0 }
        var reflog: OpaquePointer?
        try check(git_reflog_read(&reflog, handle, name), "read reflog of \(name)")
        defer { git_reflog_free(reflog) }
        var dropped = 0
        // Index 0 is the newest entry; walk from the oldest so indexes stay valid while dropping.
        var index = git_reflog_entrycount(reflog)
        while index > 0 {
            index -= 1
            guard let entry = git_reflog_entry_byindex(reflog, index),
                Int64(git_reflog_entry_committer(entry).pointee.when.time) < cutoff
            else { continue }
            try check(git_reflog_drop(reflog, index, 0), "expire reflog of \(name)")
            dropped += 1
        }
        if dropped > 0 { try check(git_reflog_write(reflog), "write reflog of \(name)") }
        return dropped
    }
}
