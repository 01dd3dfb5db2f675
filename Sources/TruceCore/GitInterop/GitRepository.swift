import Foundation
import Synchronization
internal import TruceGit

/// An ordinary git repository (not a store), found the way git finds one from a directory: where a drop-in for a git
/// command reads its config and its objects, as `truce merge-file` does.
///
/// The library reads no environment variable: the caller passes what git
/// would read from it (`GIT_DIR`, `GIT_CEILING_DIRECTORIES`, the config files
/// outside the repository).
public final class GitRepository: Sendable {
    private let repository: Mutex<Repository>

    /// The repository's git directory (`.git/`, or the repository itself when it is bare), ending with `/`.
    public let gitDirectory: String

    private init(_ repository: sending Repository) {
        gitDirectory = repository.gitDirectory
        self.repository = Mutex(repository)
    }

    /// The repository git finds from `directory`: `gitDirectory` when given (git's `GIT_DIR`), else `directory` or
    /// the nearest parent that is a work tree or a git directory, not searching at or above `ceilingDirectories`
    /// (`GIT_CEILING_DIRECTORIES`). nil when there is none, or when it belongs to another user (git treats that as
    /// none where a repository is optional).
    public static func discover(
        from directory: String, gitDirectory: String? = nil, ceilingDirectories: [String] = []
    ) throws(TruceError) -> GitRepository? {
        do {
            guard let found = try Repository.discover(from: directory, gitDirectory: gitDirectory, ceilings: ceilingDirectories) else {
                return nil
            }
            return GitRepository(found)
        } catch {
            throw .storeFailure(error)
        }
    }

    /// Every value of config `name` git reads for this repository, in git's order (the last one wins):
    /// `outsideFiles` (the system, XDG and global files, in that order; missing ones are skipped), the repository's
    /// own `config`, then its `config.worktree` when `extensions.worktreeConfig` is on. nil stands for a name written
    /// without a value. Includes are followed. Values given on git's command line (`git -c`) are not here: they
    /// reach a program through its environment, which the caller reads.
    public func configValues(_ name: String, outsideFiles: [String]) throws(TruceError) -> [String?] {
        do {
            return try repository.withLock { repository throws(GitError) in try repository.configValues(name, outsideFiles: outsideFiles) }
        } catch {
            throw error.isConfigurationError ? .invalidConfiguration(error.message) : .storeFailure(error)
        }
    }

    /// What a revision names, in git's revision syntax.
    public enum Revision: Sendable, Equatable {
        /// A blob, with its bytes.
        case blob(Data)
        /// No object: git says "object '…' does not exist".
        case notFound
        /// An object that cannot be read as a blob (a commit, a tree, a tag, or a full id of an object the repository
        /// lacks), with its id: git says "unable to read blob object …".
        case unreadableBlob(id: String)
    }

    /// What `revision` names: an object id or a unique prefix of one, `HEAD:path`, `:path` (the index), a tag…
    /// As in git, a full id is taken as it is, and the empty blob's needs no object.
    public func revision(_ revision: String) throws(TruceError) -> Revision {
        do {
            switch try repository.withLock({ repository throws(GitError) in try repository.content(ofRevision: revision) }) {
            case .blob(let data): return .blob(data)
            case .notFound: return .notFound
            case .unreadableBlob(let id): return .unreadableBlob(id: id)
            }
        } catch {
            throw .storeFailure(error)
        }
    }

    /// Stores `data` as a blob in the repository's object database, as `git hash-object -w` does; returns its id.
    public func writeBlob(_ data: Data) throws(TruceError) -> String {
        do {
            return try repository.withLock { repository throws(GitError) in try repository.writeBlob(data).hex }
        } catch {
            throw .storeFailure(error)
        }
    }
}
