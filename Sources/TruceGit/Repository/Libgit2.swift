internal import CGitShim
internal import CLibgit2

/// Process-wide libgit2 setup, done once before the first repository is opened.
package enum Libgit2 {
    private static let initialized: Void = {
        git_libgit2_init()
        // Acknowledged saves must survive power loss: fsync objects, refs and reflogs.
        _ = truce_git_enable_fsync_gitdir(1)
        _ = truce_git_enable_strict_object_creation(1)
        // libgit2 keeps the small commits and trees it parses, up to 256 MiB of their raw bytes by default, and a
        // parsed object costs ten times its bytes: a batch of a million versions held half its memory there, in
        // trees it looked up once each. Truce reads a tree once per use; commits, which walks read again, stay.
        _ = truce_git_set_cache_object_limit(Int32(GIT_OBJECT_TREE.rawValue), 0)
        _ = truce_git_set_cache_max_size(Self.objectCacheBytes)
        // libgit2 keeps every pack it has read open until its repository goes, and by default without limit: a
        // process with many stores (or one store with many packs) ran out of descriptors, and at about 1,300 open
        // descriptors Foundation's Process.run reads past a buffer while it lists them (swift-corelibs-foundation
        // issue 5472) and can crash the process. See PackDescriptorTests.
        _ = truce_git_set_mwindow_file_limit(Self.openPackFiles)
        // Every page of a pack libgit2 has read stays mapped, and counts as this process's memory, until the window
        // goes: by default one window of 1 GiB per pack, never unmapped below 8 GiB. A first sync of a million
        // documents read the whole hub through it. Smaller windows under a limit let the least recently read go; a
        // lower limit made prune's marking, which reads across every pack, map the same windows again and again.
        _ = truce_git_set_mwindow_size(Self.packWindowBytes)
        _ = truce_git_set_mwindow_mapped_limit(Self.mappedPackBytes)
        // Only the store's own config counts: no ~/.gitconfig, XDG or system file (nor the attributes files
        // they name) may change what Truce does, and an unreadable home must not fail every open.
        let searchPaths = truce_git_search_no_outside_config()
        precondition(searchPaths == 0, "libgit2 refused to clear its config search paths (\(searchPaths))")
    }()

    /// The most raw bytes of parsed commits libgit2 keeps per repository (about ten times as much memory).
    package static let objectCacheBytes = 16 << 20

    /// The most pack files libgit2 keeps open at once across the process: past it, the least recently read is closed
    /// and opened again when it is next read.
    package static let openPackFiles = 256

    /// How much of a pack libgit2 maps at a time, and how much of all packs it keeps mapped at most.
    package static let packWindowBytes = 32 << 20, mappedPackBytes = 256 << 20

    package static func ensureInitialized() { _ = initialized }

    /// Returns the memory the process has freed to the system, where the C library keeps it otherwise (glibc): after
    /// a phase of many small allocations, before one of large ones, which would not reuse it.
    package static func releaseFreedMemory() { truce_release_free_memory() }
}
