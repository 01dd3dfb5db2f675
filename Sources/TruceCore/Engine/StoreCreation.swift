import Foundation
internal import TruceGit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Creating a store so that a failure or a crash half-way never leaves a directory that no command can use.
///
/// A creation writes a marker file (`truce-creating`) into the directory
/// before anything else, fsyncs everything it wrote before it writes the
/// format marker (`truce.version`) into the config, and removes its own
/// marker only once that is fsynced too. A creation that fails (a full disk) removes what it
/// made; one killed or cut by a power loss leaves the marker, and the next
/// creation at that path (`truce init`, `DocumentStore.create`) removes what
/// it finds there and starts again. Nothing it removes can hold a version:
/// a store without `truce.version` does not open, so nothing was ever saved
/// in it. A marker beside `truce.version` is one the creation had not yet
/// removed: the store is whole, and the marker is ignored.
enum StoreCreation {
    static let markerName = "truce-creating"

    /// The names a creation makes at the top of the store directory (libgit2's bare layout, the store's own files,
    /// the lock files of their writes, and the `_git2_…` file libgit2 probes the file system with): a directory holding
    /// anything else is never taken for an interrupted creation.
    static func isMadeByCreation(_ name: String) -> Bool { names.contains(name) || name.hasPrefix("_git2_") }

    private static let names: Set<String> = [
        markerName, "HEAD", "HEAD.lock", "config", "config.lock", "description", "hooks", "info", "objects", "refs", "truce-sync",
        "branches", "logs", "packed-refs",
    ]

    /// True when `path` holds what an interrupted creation leaves: the marker, no format marker in the config, and
    /// nothing a creation does not make.
    static func isInterrupted(at path: String) -> Bool {
        guard access(path + "/" + markerName, F_OK) == 0,
            let contents = try? FileManager.default.contentsOfDirectory(atPath: path), contents.allSatisfy(isMadeByCreation)
        else { return false }
        guard let repository = try? Repository.openBare(at: path), let entries = try? repository.configEntries() else { return true }
        return !entries.contains { $0.isLocal && $0.name == StoreEngine.formatConfigName }
    }

    /// Removes what an interrupted creation left in `path`, the marker last, so that a crash meanwhile leaves it to
    /// the next creation again.
    static func clear(_ path: String) throws {
        let manager = FileManager.default
        for name in try manager.contentsOfDirectory(atPath: path) where name != markerName {
            try manager.removeItem(atPath: path + "/" + name)
        }
        try manager.removeItem(atPath: path + "/" + markerName)
    }

    /// Runs `body`, which creates the store at `path` (missing or empty), between the marker's creation and removal,
    /// after fsyncing everything it made; when `body` or the fsyncs fail, removes what was made and rethrows.
    static func creating(at path: String, _ body: () throws -> Void) throws {
        let manager = FileManager.default
        let madeDirectory = !manager.fileExists(atPath: path)
        do {
            try manager.createDirectory(atPath: path, withIntermediateDirectories: true)
            let marker = open(path + "/" + markerName, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            guard marker >= 0 else { throw DurableFiles.failure("create \(path)/\(markerName)") }
            close(marker)
            try body()
            try syncTree(path)
            if madeDirectory { DurableFiles.syncDirectory(URL(fileURLWithPath: path).deletingLastPathComponent().path) }
            guard unlink(path + "/" + markerName) == 0 else { throw DurableFiles.failure("remove \(path)/\(markerName)") }
            DurableFiles.syncDirectory(path)
        } catch {
            // Removing frees space: this works on the full disk that failed the creation. What cannot be removed
            // keeps the marker, and the next creation finishes the job.
            if madeDirectory {
                try? manager.removeItem(atPath: path)
            } else if access(path + "/" + markerName, F_OK) == 0 {
                try? clear(path)
            }
            throw error
        }
    }

    /// Fsyncs every file and directory under `path`, each directory after what it holds: a new store survives a power
    /// loss whole, with the names of everything in it. A creation calls it before it writes the format marker too, so
    /// that no power loss can keep the marker and lose the rest.
    static func syncTree(_ path: String) throws {
        var isDirectory: ObjCBool = false
        for name in try FileManager.default.contentsOfDirectory(atPath: path) {
            let child = path + "/" + name
            guard FileManager.default.fileExists(atPath: child, isDirectory: &isDirectory) else { continue }
            if isDirectory.boolValue {
                try syncTree(child)
            } else {
                let descriptor = open(child, O_RDONLY | O_CLOEXEC)
                guard descriptor >= 0 else { throw DurableFiles.failure("open \(child)") }
                defer { close(descriptor) }
                guard fsync(descriptor) == 0 else { throw DurableFiles.failure("fsync \(child)") }
            }
        }
        DurableFiles.syncDirectory(path)
    }
}

extension StoreCreation {
    /// Makes `directory` ready to be opened as `mode` says, once `device` (when given) is known to be one: creates the
    /// store when the mode asks for it, a bad device name making nothing. Returns the directory's path.
    @discardableResult
    static func prepare(_ directory: URL, mode: StoreOpeningMode, saveLog: Bool, device: String?) throws(TruceError) -> String {
        guard directory.isFileURL else {
            throw .notAStore(directory.absoluteString, reason: "a store is a local directory, and this URL is not a file URL")
        }
        return try prepare(directory.path, mode: mode, saveLog: saveLog, device: device)
    }

    /// `prepare(_:mode:saveLog:device:)` for a path, kept as given.
    @discardableResult
    static func prepare(_ path: String, mode: StoreOpeningMode, saveLog: Bool, device: String?) throws(TruceError) -> String {
        _ = try device.map(DeviceName.validated)
        switch mode {
        case .openOrCreate:
            let manager = FileManager.default
            let isEmpty = (try? manager.contentsOfDirectory(atPath: path))?.isEmpty ?? !manager.fileExists(atPath: path)
            guard isEmpty || isInterrupted(at: path) else { break }
            do { try StoreEngine.create(at: path, saveLog: saveLog) } catch .storeExists {
                // Another writer created it meanwhile: open theirs.
            }
        case .openExisting:
            break
        case .createNew:
            try StoreEngine.create(at: path, saveLog: saveLog)
        }
        return path
    }
}

extension StoreCreation {
    /// The branch a store's HEAD names: one commit that says what the store is, so that HEAD is no unborn branch
    /// (`git fsck` would say so on every store) and `git log` run in the store tells where the documents are.
    static let headBranch = "refs/heads/truce"

    /// The message of the branch's one commit.
    static let headMessage = """
        Truce store

        The documents of this store are versions under refs/truce/heads/, its change journal is refs/truce/journal.
        Read them with `truce status` and `truce log DOC`, or `git log --glob=refs/truce/heads`.

        """

    /// Points HEAD at `headBranch`, making the branch with its one commit, when HEAD is an unborn branch: at creation,
    /// and for a store made before stores had it (prune does it then).
    static func giveHeadABranch(in repository: Repository, date: Date = Date()) throws {
        guard repository.isHeadUnborn, try repository.reference(headBranch) == nil else { return }
        let signature = Signature(device: "truce", date: date)
        // In a pack, as every write's objects are: no loose object, and one fsync for both.
        let staging = ObjectStaging()
        let commit = try staging.writeCommit(
            tree: staging.writeTree([]), parents: [], author: signature, committer: signature, message: headMessage)
        try staging.flush(into: repository)
        try repository.updateReference(headBranch, to: commit, expecting: nil, message: "truce: the store's branch")
        try repository.setHead(to: headBranch)
    }
}
