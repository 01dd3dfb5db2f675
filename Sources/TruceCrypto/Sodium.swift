internal import CSodium

/// libsodium, started once per process before any of its functions runs.
///
/// `sodium_init` is safe to call more than once and from several threads;
/// it picks the fastest implementations for this processor and opens the
/// system's random source. Every type of this module calls `ready()` first.
enum Sodium {
    private static let started: Bool = sodium_init() >= 0

    /// Starts libsodium, or stops the process: without it nothing here can be kept secret.
    static func ready() {
        precondition(started, "libsodium could not start (no random source?)")
    }

    /// `count` bytes from the system's random source.
    static func randomBytes(_ count: Int) -> [UInt8] {
        ready()
        var bytes = [UInt8](repeating: 0, count: count)
        randombytes_buf(&bytes, count)
        return bytes
    }
}
