internal import TruceGit

/// The config lines that make git fsync what it writes into a store, and the upgrade of stores made with the old one.
///
/// Truce's own writes are fsynced whatever a store's config says: libgit2 is told
/// so once per process (`GIT_OPT_ENABLE_FSYNC_GITDIR`, in `Libgit2`), which covers
/// its loose objects, refs, reflogs and packs (`FsyncCountTests`). These lines are
/// for git writing into a store (a `git gc`, a push): `core.fsync=all` hardens
/// every component git knows, by `fsync` (git 2.36 and later). Stores made before
/// hold `core.fsyncObjectFiles=true`, which git 2.39 still honours but warns about
/// on every command run on the store, and on every clone of it as `remote: warning:`.
enum DurabilityConfig {
    /// What `DocumentStore.create` writes, in order.
    static let lines: [(name: String, value: String)] = [("core.fsync", "all"), ("core.fsyncMethod", "fsync")]
    /// The deprecated line stores made before hold (lowercased, as git names it).
    static let deprecatedName = "core.fsyncobjectfiles"

    static func write(in repository: Repository) throws(GitError) {
        for line in lines { try repository.setConfig(line.name, to: line.value) }
    }

    /// Replaces the deprecated line of a store made before by `lines`, once: a store without it is left alone.
    ///
    /// The new lines are written before the old one is removed, so a crash in
    /// between leaves both, never neither. A store whose config cannot be written
    /// now (read-only, or another process holds its lock) opens as it is and is
    /// upgraded at a later open: nothing Truce writes depends on these lines.
    static func upgrade(_ repository: Repository, entries: [ConfigEntry]) {
        guard let old = entries.last(where: { $0.isLocal && $0.name == deprecatedName }) else { return }
        do {
            // A store that turned the old line off keeps git's own default: the line goes, nothing replaces it.
            if old.boolValue != false {
                for line in lines where !entries.contains(where: { $0.isLocal && $0.name == line.name.lowercased() }) {
                    try repository.setConfig(line.name, to: line.value)
                }
            }
            try repository.removeConfig(deprecatedName)
        } catch {
            // Left for a later open; see above.
        }
    }
}
