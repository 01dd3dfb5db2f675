internal import CGitShim
internal import CLibgit2
import Foundation

/// What a revision names, for `truce merge-file --object-id`.
package enum RevisionContent: Sendable, Equatable {
    case blob(Data)
    /// The revision names no object (git: "object '…' does not exist").
    case notFound
    /// The revision names an object that cannot be read as a blob (a commit, a tree, or a full id of an object the
    /// repository lacks): its id.
    case unreadableBlob(String)
}

extension Repository {
    /// The repository git would find from `directory`: `gitDirectory` when given (git's `GIT_DIR`), else `directory`
    /// or the nearest parent that is a work tree or a git directory, stopping at `ceilings`
    /// (`GIT_CEILING_DIRECTORIES`). nil outside any repository, and for one owned by another user, which git also
    /// treats as none where a repository is optional.
    package static func discover(from directory: String, gitDirectory: String?, ceilings: [String]) throws(GitError) -> Repository? {
        Libgit2.ensureInitialized()
        var handle: OpaquePointer?
        let code: Int32
        if let gitDirectory {
            code = git_repository_open_ext(&handle, gitDirectory, GIT_REPOSITORY_OPEN_NO_SEARCH.rawValue, nil)
        } else {
            code = git_repository_open_ext(&handle, directory, 0, ceilings.isEmpty ? nil : ceilings.joined(separator: ":"))
        }
        if code == GIT_ENOTFOUND.rawValue || code == GIT_EOWNER.rawValue { return nil }
        try check(code, "find the repository of \(directory)")
        return try Repository(handle: handle!, path: String(cString: git_repository_path(handle))).guardingLooseObjects()
    }

    /// Every value of `name` in the config files git reads for this repository, in git's order: `outsideFiles`
    /// (system, XDG and global files, as the caller found them; missing ones are skipped), the repository's own
    /// `config`, then its `config.worktree` when `extensions.worktreeConfig` is on. nil stands for a name given
    /// without `=` (git's implicit true). Includes are followed, conditional ones judged against this repository.
    package func configValues(_ name: String, outsideFiles: [String]) throws(GitError) -> [String?] {
        var values: [String?] = []
        for file in outsideFiles + [commonDirectory + "config"] {
            values += try Self.configValues(name, inFile: file, repository: handle)
        }
        let worktreeConfig = try Self.configValues("extensions.worktreeconfig", inFile: commonDirectory + "config", repository: handle)
        if let last = worktreeConfig.last, Self.isTrue(last) {
            values += try Self.configValues(name, inFile: gitDirectory + "config.worktree", repository: handle)
        }
        return values
    }

    /// The values of `name` in one config file and what it includes; none when the file does not exist.
    private static func configValues(_ name: String, inFile path: String, repository: OpaquePointer) throws(GitError) -> [String?] {
        guard FileManager.default.isReadableFile(atPath: path) else { return [] }
        var config: OpaquePointer?
        try check(git_config_new(&config), "read configuration")
        defer { git_config_free(config) }
        try check(git_config_add_file_ondisk(config, path, GIT_CONFIG_LEVEL_APP, repository, 0), "read \(path)")
        var iterator: OpaquePointer?
        try check(git_config_multivar_iterator_new(&iterator, config, name, nil), "read \(name) in \(path)")
        defer { git_config_iterator_free(iterator) }
        var values: [String?] = []
        var entry: UnsafeMutablePointer<git_config_entry>?
        while true {
            let code = git_config_next(&entry, iterator)
            if code == GIT_ITEROVER.rawValue { break }
            try check(code, "read \(name) in \(path)")
            values.append(entry?.pointee.value.map { String(cString: $0) })
        }
        return values
    }

    /// A config value as git reads a boolean: nil (no `=`) is true.
    private static func isTrue(_ value: String?) -> Bool {
        guard let value else { return true }
        var result: Int32 = 0
        return git_config_parse_bool(&result, value) == 0 && result != 0
    }

    /// What `revision` names, in git's revision syntax (an id or a prefix of one, `HEAD:path`, `:path`, a tag…).
    package func content(ofRevision revision: String) throws(GitError) -> RevisionContent {
        if let (stage, path) = Self.indexPath(revision) { return try content(ofIndexEntry: path, stage: stage) }
        // git takes a full id as it is, present or not, and the empty blob's without reading it.
        if revision.utf8.count == 40, revision.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) {
            if revision == Self.emptyBlob { return .blob(Data()) }
            var oid = git_oid()
            var object: OpaquePointer?
            git_oid_fromstr(&oid, revision)
            let code = git_object_lookup(&object, handle, &oid, GIT_OBJECT_ANY)
            if code == GIT_ENOTFOUND.rawValue { return .unreadableBlob(revision) }
            try check(code, "read \(revision)")
            git_object_free(object)
        }
        var object: OpaquePointer?
        let code = git_revparse_single(&object, handle, revision)
        if [GIT_ENOTFOUND, GIT_EAMBIGUOUS, GIT_EINVALIDSPEC].map(\.rawValue).contains(code) { return .notFound }
        try check(code, "read \(revision)")
        defer { git_object_free(object) }
        let id = ObjectID(git_object_id(object)!.pointee)
        guard git_object_type(object) == GIT_OBJECT_BLOB else { return .unreadableBlob(id.hex) }
        return .blob(try readBlob(id))
    }

    /// The id of the empty blob (SHA-1), which git knows without reading it.
    private static let emptyBlob = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"

    /// `:path` or `:N:path` (git's name for what the index holds at a path, stage N, 0 by default); nil for any
    /// other revision (`:/text` searches commit messages). libgit2 1.5 leaves these unimplemented.
    private static func indexPath(_ revision: String) -> (stage: Int32, path: String)? {
        guard revision.hasPrefix(":"), !revision.hasPrefix(":/") else { return nil }
        let rest = revision.dropFirst()
        if rest.count >= 2, let digit = rest.first?.wholeNumberValue, (0...3).contains(digit), rest.dropFirst().first == ":" {
            return (Int32(digit), String(rest.dropFirst(2)))
        }
        return (0, String(rest))
    }

    private func content(ofIndexEntry path: String, stage: Int32) throws(GitError) -> RevisionContent {
        var index: OpaquePointer?
        let code = git_repository_index(&index, handle)
        // A bare repository has no index: nothing is there.
        if code == GIT_EBAREREPO.rawValue { return .notFound }
        try check(code, "read the index")
        defer { git_index_free(index) }
        guard let entry = git_index_get_bypath(index, path, stage) else { return .notFound }
        return .blob(try readBlob(ObjectID(entry.pointee.id)))
    }
}
