import Foundation
internal import TruceGit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The newest author date among the versions this store adopted by sync: the part of the store's hybrid clock
/// (`HybridDates`) that no parent carries.
///
/// Kept in `truce-sync/newest-adopted-date`, one line: seconds since 1970.
/// A save reads it (one small file, whatever the store's size); only a sync
/// writes it, under the `SyncLock`, and before it publishes the first head it
/// adopts: written whole under a temporary name, fsynced, renamed into place
/// and its directory fsynced. So after a crash at any point it is at least
/// the date of every adopted version a head reaches (it may be ahead of a
/// sync that died before publishing, which only dates the next saves a little
/// later than they had to be). A store without the file (new, or last synced
/// by a Truce before hybrid dates) has adopted nothing it knows of: its saves
/// are dated after their parents alone until its next sync adopts a version.
enum NewestAdoptedDate {
    #if canImport(Glibc)
        private static let systemRead = Glibc.read
    #elseif canImport(Darwin)
        private static let systemRead = Darwin.read
    #endif

    static func path(in repository: Repository) -> String { SyncLock.directory(in: repository) + fileName }

    private static let fileName = "newest-adopted-date"

    /// The recorded date; nil when there is none, or the file does not hold one (it is then written anew).
    static func read(in repository: Repository) -> Date? {
        let descriptor = open(path(in: repository), O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 32)
        let count = bytes.withUnsafeMutableBytes { systemRead(descriptor, $0.baseAddress, $0.count) }
        guard count > 1, bytes[count - 1] == 0x0A, let seconds = Int64(String(decoding: bytes[..<(count - 1)], as: UTF8.self)), seconds >= 0
        else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// Records `date` when it is later than the recorded one, durably; the caller holds the `SyncLock`.
    static func raise(to date: Date, in repository: Repository) throws {
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        if let recorded = read(in: repository), Int64(recorded.timeIntervalSince1970) >= seconds { return }
        let directory = SyncLock.directory(in: repository)
        // Under the sync lock no other writer is between creating and renaming one: these were left by a killed sync.
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] where name.hasPrefix(fileName + ".tmp-") {
            unlink(directory + name)
        }
        try DurableFiles.replace(path(in: repository), with: Array("\(seconds)\n".utf8))
    }
}
