internal import CLibgit2
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Re-implements git's loose ref files, their locks and reflog lines (gitrepository-layout, git-update-ref LOGGING): byte-compatible with git, listed in TruceGit/README.md.
///
/// A reference's own file (`refs/…`) and its reflog (`logs/refs/…`), read and written as git's files backend does,
/// without libgit2.
///
/// libgit2 1.5 reads the whole `packed-refs` file before it writes or
/// deletes any reference (to look for a name that clashes with the new one)
/// and whenever it looks up a name that has no loose file: at a million
/// documents one save read 100 MB. Here a write or a lookup reads the one
/// loose file and, when it is absent, finds the name in `packed-refs` by
/// binary search (`PackedReferences`). The protocol is git's: the new value
/// goes into `<ref>.lock`, created exclusively (so git, libgit2 and Truce wait
/// for each other), the old value is compared under that lock, the reflog entry
/// is appended, then the lock is fsynced and renamed over the reference and its
/// directory fsynced: the same files and the same fsyncs as libgit2's.
enum LooseReferenceFiles {
    /// What the loose file of `name` holds: nil when there is none, `.symbolic` for a `ref: …` file.
    enum Contents {
        case direct(ObjectID)
        case symbolic
    }

    /// Reads the loose file at `path`, of the reference `name`; nil when it does not exist (or is a directory, the
    /// parent of other refs).
    static func contents(of path: String, name: String) throws(GitError) -> Contents? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT || errno == ENOTDIR || errno == EISDIR { return nil }
            throw DurableFiles.failure("read reference \(path)")
        }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 256)
        var count = 0
        while count < buffer.count {
            let got = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + count, $0.count - count) }
            if got < 0, errno == EINTR { continue }
            if got < 0, errno == EISDIR { return nil }
            if got < 0 { throw DurableFiles.failure("read reference \(path)") }
            if got == 0 { break }
            count += got
        }
        let bytes = buffer[0..<count]
        if bytes.starts(with: Array("ref: ".utf8)) { return .symbolic }
        guard count >= 40, let id = ObjectID(hexBytes: bytes.prefix(40)), count == 40 || [0x0A, 0x20, 0x09, 0x0D].contains(bytes[40]) else {
            // As libgit2 words it, so that a damaged head reads the same whichever path found it.
            throw GitError(
                operation: "damaged reference file (restore or remove it)", code: -1, errorClass: 0,
                message: "corrupted loose reference file: \(name)")
        }
        return .direct(id)
    }

    /// A reflog line as git's files backend writes it: old and new ids, the committer (the repository's `user.*`, else
    /// `unknown`) with the time and zone of now, then a tab and the message as `reflogMessage` makes it, if any is left.
    static func reflogLine(repository: OpaquePointer, old: ObjectID?, new: ObjectID, message: String) -> [UInt8] {
        var signature: UnsafeMutablePointer<git_signature>?
        if git_signature_default(&signature, repository) < 0 { _ = git_signature_now(&signature, "unknown", "unknown") }
        defer { git_signature_free(signature) }
        var ident = "unknown <unknown> \(Int64(Date().timeIntervalSince1970)) +0000"
        if let signature {
            let offset = Int(signature.pointee.when.offset)
            let zone = String(format: "%@%02d%02d", offset < 0 ? "-" : "+", abs(offset) / 60, abs(offset) % 60)
            ident = "\(String(cString: signature.pointee.name)) <\(String(cString: signature.pointee.email))> \(signature.pointee.when.time) \(zone)"
        }
        let zero = String(repeating: "0", count: 40)
        var text = "\(old?.hex ?? zero) \(new.hex) \(ident)"
        let message = reflogMessage(message)
        if !message.isEmpty { text += "\t" + message }
        return Array((text + "\n").utf8)
    }

    /// `message` as git logs it (`copy_reflog_msg` in refs.c): each run of spaces, tabs, carriage returns and
    /// newlines made one space, none left at either end. (libgit2 only makes each newline a space: a message with a
    /// tab or two spaces in a row was logged otherwise than `git update-ref -m` logs it.)
    static func reflogMessage(_ message: String) -> String {
        var bytes: [UInt8] = []
        var spaceBefore = false
        for byte in message.utf8 {
            if [0x20, 0x09, 0x0A, 0x0D].contains(byte) {
                spaceBefore = !bytes.isEmpty
                continue
            }
            if spaceBefore { bytes.append(0x20) }
            spaceBefore = false
            bytes.append(byte)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `line` to the reflog at `path`, fsynced with its directory, as libgit2 appends one.
    static func appendReflog(_ line: [UInt8], at path: String) throws(GitError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else { throw DurableFiles.failure("append reflog \(path)") }
        do {
            defer { close(descriptor) }
            try DurableFiles.writeAll(line, to: descriptor, path: path)
            guard fsync(descriptor) == 0 else { throw DurableFiles.failure("fsync \(path)") }
        }
        DurableFiles.syncDirectory(directory(of: path))
    }

    /// Creates the directories above `path` that are missing.
    static func makeDirectories(holding path: String) throws(GitError) {
        for directory in DurableFiles.missingDirectories(holding: path) where mkdir(directory, 0o777) != 0 && errno != EEXIST {
            throw DurableFiles.failure("create directory \(directory)")
        }
    }

    /// Takes git's lock of the file at `path` (a reference, `packed-refs`): `<path>.lock`, created exclusively, open for
    /// writing the new contents; a lock another process holds is `GIT_ELOCKED`.
    static func lock(_ path: String, mode: mode_t = 0o666) throws(GitError) -> Int32 {
        let lockPath = path + ".lock"
        let descriptor = open(lockPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else {
            let reason = String(cString: strerror(errno))
            throw GitError(
                operation: "lock \(lockPath)", code: errno == EEXIST ? GIT_ELOCKED.rawValue : -1, errorClass: 0,
                message: "failed to lock file '\(lockPath)' for writing: \(reason)")
        }
        return descriptor
    }

    static func directory(of path: String) -> String {
        String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
    }
}

extension Repository {
    /// Whether `name` is a loose file, whatever `packed-refs` holds.
    package func hasLooseReference(_ name: String) -> Bool {
        access(gitDirectory + name, F_OK) == 0
    }

    /// Reads a direct reference, nil when it does not exist: its loose file, else its line in `packed-refs`.
    package func reference(_ name: String) throws(GitError) -> ObjectID? {
        switch try LooseReferenceFiles.contents(of: gitDirectory + name, name: name) {
        case .direct(let id): return id
        case .symbolic:
            var oid = git_oid()
            let code = git_reference_name_to_id(&oid, handle, name)
            if code == GIT_ENOTFOUND.rawValue { return nil }
            try check(code, "read reference \(name)")
            return ObjectID(oid)
        case nil: return try packedReference(name)
        }
    }

    /// The target of `name`'s line in `packed-refs`, found by binary search; nil when it has none.
    package func packedReference(_ name: String) throws(GitError) -> ObjectID? {
        try packedReferences().references(withPrefix: name).first { $0.name == name }?.target
    }

    /// Points `name` at `target` only if it currently points at `expected` (nil: only if it does not exist).
    ///
    /// This is the compare-and-swap every writer relies on: a lost race fails
    /// with `GIT_EMODIFIED` or `GIT_EEXISTS` and changes nothing. The reflog
    /// entry is appended when the store logs every update
    /// (`core.logAllRefUpdates=always`, as a store is made) or the reference
    /// has a reflog already, as libgit2 decides. Each directory this call
    /// creates is fsynced in its parent before it returns, so a power loss
    /// cannot keep the reference file and lose the directory naming it.
    package func updateReference(_ name: String, to target: ObjectID, expecting expected: ObjectID?, message: String) throws(GitError) {
        var valid: Int32 = 0
        guard git_reference_name_is_valid(&valid, name) == 0, valid == 1, name.hasPrefix("refs/") else {
            throw GitError(operation: "update reference \(name)", code: -1, errorClass: 0, message: "invalid reference name")
        }
        let path = gitDirectory + name, log = gitDirectory + "logs/" + name
        let created = DurableFiles.missingDirectories(holding: path) + DurableFiles.missingDirectories(holding: log)
        try LooseReferenceFiles.makeDirectories(holding: path)
        let descriptor = try LooseReferenceFiles.lock(path)
        var committed = false
        defer {
            if descriptor >= 0, !committed { close(descriptor) }
            if !committed { unlink(path + ".lock") }
        }
        let current = try reference(name)
        guard current == expected else {
            throw GitError(
                operation: "update reference \(name)", code: expected == nil ? GIT_EEXISTS.rawValue : GIT_EMODIFIED.rawValue, errorClass: 0,
                message: expected == nil ? "a reference with that name already exists" : "old reference value does not match")
        }
        try DurableFiles.writeAll(Array((target.hex + "\n").utf8), to: descriptor, path: path + ".lock")
        if try logsAllReferenceUpdates() || access(log, F_OK) == 0 {
            try LooseReferenceFiles.makeDirectories(holding: log)
            let line = LooseReferenceFiles.reflogLine(repository: handle, old: current, new: target, message: message)
            try LooseReferenceFiles.appendReflog(line, at: log)
        }
        guard fsync(descriptor) == 0 else { throw DurableFiles.failure("fsync \(path).lock") }
        committed = true
        close(descriptor)
        guard rename(path + ".lock", path) == 0 else {
            unlink(path + ".lock")
            throw DurableFiles.failure("rename \(path).lock")
        }
        DurableFiles.syncDirectory(LooseReferenceFiles.directory(of: path))
        DurableFiles.syncParents(of: created)
    }

    /// Deletes `name` only if it still points at `expected`; false when it was already gone.
    ///
    /// A packed line is removed by Truce's own rewrite of `packed-refs`, which
    /// reads the file again under its lock: libgit2 1.5 rewrites it from what
    /// it read before taking the lock, and would drop lines another writer
    /// packed in between. The loose file and its reflog go under the
    /// reference's lock, after its value is compared.
    @discardableResult
    package func deleteReference(_ name: String, expecting expected: ObjectID) throws(GitError) -> Bool {
        let path = gitDirectory + name
        guard let value = try reference(name) else { return false }
        guard value == expected else {
            throw GitError(
                operation: "delete reference \(name)", code: GIT_EMODIFIED.rawValue, errorClass: 0, message: "reference moved since it was read")
        }
        var deletedPacked = false
        if try packedReference(name) != nil {
            try updatePackedReferences(adding: [], removing: [name])
            deletedPacked = true
        }
        guard access(path, F_OK) == 0 else { return deletedPacked }
        let descriptor = try LooseReferenceFiles.lock(path)
        close(descriptor)
        defer { unlink(path + ".lock") }
        guard case .direct(let current) = try LooseReferenceFiles.contents(of: path, name: name) else { return deletedPacked }
        guard current == expected else {
            throw GitError(
                operation: "delete reference \(name)", code: GIT_EMODIFIED.rawValue, errorClass: 0, message: "reference moved since it was read")
        }
        unlink(gitDirectory + "logs/" + name)
        guard unlink(path) == 0 || errno == ENOENT else { throw DurableFiles.failure("delete reference \(name)") }
        return true
    }

    /// Whether every reference update gets a reflog entry (`core.logAllRefUpdates=always`), read once per handle.
    func logsAllReferenceUpdates() throws(GitError) -> Bool {
        if let known = logsAllReferenceUpdatesCache { return known }
        let always = try configEntries().last { $0.name == "core.logallrefupdates" }?.value.lowercased() == "always"
        logsAllReferenceUpdatesCache = always
        return always
    }
}
