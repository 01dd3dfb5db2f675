internal import CLibgit2

/// One `name = value` line of git configuration, as libgit2 read it.
package struct ConfigEntry: Sendable, Equatable {
    /// The full name, section and key lowercased as git does (`merge.mydriver.driver`).
    package let name: String
    package let value: String
    /// True when it comes from the repository's own `config` file, not a global or system one.
    package let isLocal: Bool

    /// The value as git reads a boolean (`true`, `yes`, `on`, `1` and their opposites, any case); nil when it is none.
    package var boolValue: Bool? { Self.boolean(value) }

    /// `text` read as git reads a boolean config value (`true`, `yes`, `on`, `1`, an empty value… any case); nil when
    /// git would refuse it.
    package static func boolean(_ text: String) -> Bool? {
        var result: Int32 = 0
        return git_config_parse_bool(&result, text) == 0 ? result != 0 : nil
    }
}

extension Repository {
    /// Every configuration entry visible to the repository, in the order git reads them.
    package func configEntries() throws(GitError) -> [ConfigEntry] {
        var config: OpaquePointer?
        try check(git_repository_config_snapshot(&config, handle), "read configuration")
        defer { git_config_free(config) }
        return try Self.entries(of: config)
    }

    /// The entries of a file in git-config syntax that is not a repository's config (the synced `.truce/config`).
    package static func configEntries(inFile path: String) throws(GitError) -> [ConfigEntry] {
        var config: OpaquePointer?
        try check(git_config_open_ondisk(&config, path), "read \(path)")
        defer { git_config_free(config) }
        return try entries(of: config)
    }

    private static func entries(of config: OpaquePointer?) throws(GitError) -> [ConfigEntry] {
        var iterator: OpaquePointer?
        try check(git_config_iterator_new(&iterator, config), "read configuration")
        defer { git_config_iterator_free(iterator) }
        var entries: [ConfigEntry] = []
        var entry: UnsafeMutablePointer<git_config_entry>?
        while true {
            let code = git_config_next(&entry, iterator)
            if code == GIT_ITEROVER.rawValue { break }
            try check(code, "read configuration")
            guard let current = entry?.pointee else { continue }
            entries.append(
                ConfigEntry(
                    name: String(cString: current.name),
                    value: current.value.map { String(cString: $0) } ?? "",
                    isLocal: current.level == GIT_CONFIG_LEVEL_LOCAL
                ))
        }
        return entries
    }

    /// Writes `name = value` to the repository's own `config` file.
    package func setConfig(_ name: String, to value: String) throws(GitError) {
        var config: OpaquePointer?
        try check(git_repository_config(&config, handle), "open configuration")
        defer { git_config_free(config) }
        var local: OpaquePointer?
        try check(git_config_open_level(&local, config, GIT_CONFIG_LEVEL_LOCAL), "open local configuration")
        defer { git_config_free(local) }
        try check(git_config_set_string(local, name, value), "set \(name)")
    }

    /// Removes every `name` line from the repository's own `config` file; nothing when it has none.
    package func removeConfig(_ name: String) throws(GitError) {
        var config: OpaquePointer?
        try check(git_repository_config(&config, handle), "open configuration")
        defer { git_config_free(config) }
        var local: OpaquePointer?
        try check(git_config_open_level(&local, config, GIT_CONFIG_LEVEL_LOCAL), "open local configuration")
        defer { git_config_free(local) }
        let removed = git_config_delete_multivar(local, name, ".*")
        if removed != GIT_ENOTFOUND.rawValue { try check(removed, "remove \(name)") }
    }
}

extension Repository {
    /// Sets each `name = value` in a file in git-config syntax that is not a repository's config, as `git config --file`
    /// does: every earlier value of the name is replaced, and a section that does not exist yet is added.
    package static func setConfig(_ values: [(name: String, value: String)], inFile path: String) throws(GitError) {
        var config: OpaquePointer?
        try check(git_config_open_ondisk(&config, path), "open \(path)")
        defer { git_config_free(config) }
        for (name, value) in values {
            // One value per name afterwards: a name set several times (a multivar) would make git_config_set_string fail.
            let removed = git_config_delete_multivar(config, name, ".*")
            if removed != GIT_ENOTFOUND.rawValue { try check(removed, "replace \(name)") }
            try check(git_config_set_string(config, name, value), "set \(name)")
        }
    }
}
