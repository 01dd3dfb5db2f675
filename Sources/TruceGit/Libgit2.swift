internal import CGitShim
internal import CLibgit2

/// Process-wide libgit2 setup, done once before the first repository is opened.
package enum Libgit2 {
    private static let initialized: Void = {
        git_libgit2_init()
        // Acknowledged saves must survive power loss: fsync objects, refs and reflogs.
        _ = truce_git_enable_fsync_gitdir(1)
        _ = truce_git_enable_strict_object_creation(1)
        // Only the store's own config counts: no ~/.gitconfig, XDG or system file (nor the attributes files
        // they name) may change what Truce does, and an unreadable home must not fail every open.
        let searchPaths = truce_git_search_no_outside_config()
        precondition(searchPaths == 0, "libgit2 refused to clear its config search paths (\(searchPaths))")
    }()

    package static func ensureInitialized() { _ = initialized }
}
