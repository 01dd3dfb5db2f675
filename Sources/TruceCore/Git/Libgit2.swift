import CGitShim
import CLibgit2

/// Process-wide libgit2 setup, done once before the first repository is opened.
enum Libgit2 {
    private static let initialized: Void = {
        git_libgit2_init()
        // Acknowledged saves must survive power loss: fsync objects, refs and reflogs.
        _ = truce_git_enable_fsync_gitdir(1)
        _ = truce_git_enable_strict_object_creation(1)
    }()

    static func ensureInitialized() { _ = initialized }
}
