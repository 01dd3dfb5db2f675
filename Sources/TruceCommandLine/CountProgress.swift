import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A long operation's "<doing>: N of M" on one terminal line, redrawn at most ten times a second, as sync's traffic is.
///
/// Only when stderr is a terminal: scripts and pipes get the summary alone.
final class CountProgress: @unchecked Sendable {
    private let output: Output
    private let doing: String
    private let lock = NSLock()
    private var lastDrawn = Date.distantPast

    /// A progress line saying `doing` (`exporting documents`), or nil when stderr is not a terminal.
    init?(output: Output, doing: String) {
        guard isatty(STDERR_FILENO) == 1 else { return nil }
        (self.output, self.doing) = (output, doing)
    }

    /// Shows `done` of `total`; the last count always shows.
    func show(_ done: Int, of total: Int) {
        lock.withLock {
            guard done >= total || Date().timeIntervalSince(lastDrawn) >= 0.1 else { return }
            lastDrawn = Date()
            output.progress("\(doing): \(count(done)) of \(count(total))")
        }
    }

    /// Clears the line, so that the summary starts on a clean one.
    func finish() {
        lock.withLock { output.progress("") }
        output.writeError(Data("\r".utf8))
    }

    /// `show` as a callback for the library's `progress:` parameters.
    var callback: @Sendable (Int, Int) -> Void { { [self] done, total in show(done, of: total) } }
}
