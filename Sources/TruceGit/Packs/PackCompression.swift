/// How a pack's objects are deflated: the zlib level a `PackWriter` writes them at.
package enum PackCompression: Sendable {
    /// zlib's default level, as git deflates its packs (`core.compression`): what a store's versions are packed at.
    case standard
    /// zlib's fastest level, as git deflates its loose objects (`core.looseCompression`): for a large object Truce writes
    /// for itself and seldom reads, a journal entry's batch file (at the default level, deflating the batch file of a
    /// first sync of 10,000 documents took a twentieth of that sync).
    case fastest
    /// Stored in zlib streams uncompressed: deflating a small object costs several microseconds of fixed work (zlib
    /// builds its trees either way), a save log checkpoint's main cost, and the small packs it writes are folded (and
    /// deflated) later.
    case stored

    /// The zlib level: -1 for zlib's default.
    var level: Int32 {
        switch self {
        case .standard: -1
        case .fastest: 1
        case .stored: 0
        }
    }
}
