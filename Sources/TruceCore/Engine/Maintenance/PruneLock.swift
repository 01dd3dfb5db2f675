import Foundation
internal import TruceGit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The exclusive lock that keeps two prunes of one store apart: `<store>/truce-prune.lock`, holding the owner's pid.
///
/// A lock whose process is gone, or older than an hour, was left by a prune
/// that died: it is taken over, never one a live prune holds.
struct PruneLock {
    let path: String

    static let staleAge: TimeInterval = 3600

    /// Takes the lock or throws `TruceError.busy`.
    static func acquire(in gitDirectory: String) throws(TruceError) -> PruneLock {
        let path = gitDirectory + "truce-prune.lock"
        for _ in 0..<2 {
            let descriptor = open(path, O_CREAT | O_EXCL | O_WRONLY, 0o644)
            if descriptor >= 0 {
                let pid = "\(getpid())\n"
                _ = pid.withCString { write(descriptor, $0, strlen($0)) }
                fsync(descriptor)
                close(descriptor)
                return PruneLock(path: path)
            }
            guard errno == EEXIST, let judged = StaleLocks.fileIdentity(path), isStale(path) else { break }
            // Renamed aside rather than unlinked: two prunes that both judged it stale cannot both take it.
            StaleLocks.takeAside(path, ifStillFile: judged.number)
        }
        throw .busy("another prune holds \(path)")
    }

    func release() { unlink(path) }

    private static func isStale(_ path: String) -> Bool {
        if let modified = DurableFiles.status(path)?.modified, Date().timeIntervalSince(modified) > staleAge { return true }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
            let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
        else { return true }
        return kill(pid, 0) != 0 && errno == ESRCH
    }
}
