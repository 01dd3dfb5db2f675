import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The scratch repositories of pushes killed while they pushed.
///
/// A push's scratch repository (an outgoing `Quarantine`) lives in the
/// system's temporary directory, out of every store's sight: a sync killed
/// while pushing leaves it there (`tmp_truce_outgoing_<pid>_<uuid>`, about
/// 70 KB), and neither prune nor the next sync of that store would find it.
/// Each new one removes those whose process is gone and that are older than
/// `staleAge`; one of another process that is still running, or that another
/// process may still be using (its process is unknown here, in another pid
/// namespace), is left alone until then.
enum OutgoingLeftovers {
    static let prefix = "tmp_truce_outgoing_"
    /// A push's scratch repository is made when it starts and used until it ends: a day is beyond any push.
    static let staleAge: TimeInterval = 86_400

    /// Removes from `directory` (with a trailing slash) the scratch repositories whose process no longer runs and
    /// that were last changed more than `staleAge` before `now`.
    static func removeStale(in directory: String, now: Date = Date()) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names where name.hasPrefix(prefix) {
            guard let pid = name.dropFirst(prefix.count).split(separator: "_").first.flatMap({ pid_t($0) }), pid > 0, pid != getpid(),
                kill(pid, 0) != 0, errno == ESRCH
            else { continue }
            let path = directory + name
            guard let status = DurableFiles.status(path), now.timeIntervalSince(status.modified) > staleAge else { continue }
            try? FileManager.default.removeItem(atPath: path)
        }
    }
}
