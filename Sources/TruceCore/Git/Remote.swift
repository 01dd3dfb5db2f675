import CLibgit2
import Foundation

extension Repository {
    /// Downloads every object the remote's refs matching `pattern` need, and returns those refs as the remote advertised them.
    ///
    /// No local reference is written: the caller decides which advertised
    /// refs become local ones. Works for any transport libgit2 has: a local
    /// path, `file://`, ssh and https.
    func fetch(from url: String, refsMatching pattern: String) throws(GitError) -> [(name: String, target: ObjectID)] {
        var remote: OpaquePointer?
        try check(git_remote_create_anonymous(&remote, handle, url), "open remote \(url)")
        defer { git_remote_free(remote) }
        var callbacks = git_remote_callbacks()
        try check(git_remote_init_callbacks(&callbacks, UInt32(GIT_REMOTE_CALLBACKS_VERSION)), "prepare remote callbacks")
        try check(git_remote_connect(remote, GIT_DIRECTION_FETCH, &callbacks, nil, nil), "connect to \(url)")
        defer { git_remote_disconnect(remote) }

        var heads: UnsafeMutablePointer<UnsafePointer<git_remote_head>?>?
        var count = 0
        try check(git_remote_ls(&heads, &count, remote), "list the references of \(url)")
        var advertised: [(String, ObjectID)] = []
        for index in 0..<count {
            guard let head = heads?[index]?.pointee else { continue }
            let name = String(cString: head.name)
            if fnmatch(pattern, name, 0) == 0 { advertised.append((name, ObjectID(head.oid))) }
        }
        guard !advertised.isEmpty else { return [] }
        var options = git_fetch_options()
        try check(git_fetch_options_init(&options, UInt32(GIT_FETCH_OPTIONS_VERSION)), "prepare fetch")
        options.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE
        options.update_fetchhead = 0
        // A refspec needs a destination, but only update_tips would write it, and it is never called.
        try withStringArray(["\(pattern):\(pattern)"]) { refspecs throws(GitError) in
            try check(git_remote_download(remote, refspecs, &options), "download from \(url)")
        }
        return advertised
    }

    /// Sends `references` (local names, pushed under the same names) and the objects they need to `url`.
    func push(_ references: [String], to url: String) throws(GitError) {
        guard !references.isEmpty else { return }
        var remote: OpaquePointer?
        try check(git_remote_create_anonymous(&remote, handle, url), "open remote \(url)")
        defer { git_remote_free(remote) }
        var options = git_push_options()
        try check(git_push_options_init(&options, UInt32(GIT_PUSH_OPTIONS_VERSION)), "prepare push")
        // git_remote_push succeeds even when the remote refuses a ref; only this callback hears of it.
        var rejected: [String] = []
        options.callbacks.push_update_reference = { name, status, payload in
            if let name, let status, let payload {
                payload.assumingMemoryBound(to: [String].self).pointee.append("\(String(cString: name)): \(String(cString: status))")
            }
            return 0
        }
        try withUnsafeMutablePointer(to: &rejected) { sink throws(GitError) in
            options.callbacks.payload = UnsafeMutableRawPointer(sink)
            try withStringArray(references.map { "\($0):\($0)" }) { refspecs throws(GitError) in
                try check(git_remote_push(remote, refspecs, &options), "push to \(url)")
            }
        }
        if let first = rejected.first {
            throw GitError(operation: "push to \(url)", code: -1, errorClass: 0,
                           message: "the remote refused \(rejected.count) reference(s), first \(first)")
        }
    }
}

/// Calls `body` with a `git_strarray` of `strings`, valid only inside `body`.
@discardableResult
func withStringArray<Value>(_ strings: [String], _ body: (UnsafePointer<git_strarray>) throws(GitError) -> Value) throws(GitError) -> Value {
    var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
    defer { pointers.forEach { free($0) } }
    let outcome: Result<Value, GitError> = pointers.withUnsafeMutableBufferPointer { buffer in
        var array = git_strarray(strings: buffer.baseAddress, count: buffer.count)
        do throws(GitError) { return .success(try body(&array)) } catch { return .failure(error) }
    }
    return try outcome.get()
}
