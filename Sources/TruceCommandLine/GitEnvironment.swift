import Foundation
import Truce

/// What git 2.39 reads from its environment to find a repository and its config, read the same way for a command
/// that stands in for a git command (`merge-file`).
struct GitEnvironment {
    let variables: [String: String]

    init(_ variables: [String: String] = ProcessInfo.processInfo.environment) { self.variables = variables }

    /// `GIT_DIR`: the git directory to use instead of searching for one.
    var gitDirectory: String? { variables["GIT_DIR"].flatMap { $0.isEmpty ? nil : $0 } }

    /// `GIT_CEILING_DIRECTORIES`: the directories the search for a repository does not enter, `:`-separated.
    var ceilingDirectories: [String] { (variables["GIT_CEILING_DIRECTORIES"] ?? "").split(separator: ":").map(String.init) }

    /// The config files git reads before a repository's own, in its order: the system file (unless
    /// `GIT_CONFIG_NOSYSTEM`), then `GIT_CONFIG_GLOBAL`, or else the XDG file and `~/.gitconfig`.
    var outsideConfigFiles: [String] {
        var files: [String] = []
        if !Self.isTrue(variables["GIT_CONFIG_NOSYSTEM"]) {
            // Debian's git is built with prefix /usr, whose system config is /etc/gitconfig.
            files.append(variables["GIT_CONFIG_SYSTEM"] ?? "/etc/gitconfig")
        }
        if let global = variables["GIT_CONFIG_GLOBAL"] {
            files.append(global)
        } else {
            let home = variables["HOME"] ?? ""
            if let xdg = variables["XDG_CONFIG_HOME"], !xdg.isEmpty {
                files.append(xdg + "/git/config")
            } else if !home.isEmpty {
                files.append(home + "/.config/git/config")
            }
            if !home.isEmpty { files.append(home + "/.gitconfig") }
        }
        return files
    }

    /// The config values given on git's command line (`git -c name=value`, `--config-env`), which git passes to the
    /// commands it runs in `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n` and then
    /// `GIT_CONFIG_PARAMETERS`, read in that order. Names are canonical (section and key lowercased); nil is a name
    /// given without a value. Throws git's message for a malformed variable.
    func commandLineConfig() throws(Failure) -> [(name: String, value: String?)] {
        var entries: [(name: String, value: String?)] = []
        if let text = variables["GIT_CONFIG_COUNT"] {
            guard let count = Int(text), count >= 0 else { throw Failure("bogus count in GIT_CONFIG_COUNT", isError: true) }
            for index in 0..<count {
                guard let key = variables["GIT_CONFIG_KEY_\(index)"] else {
                    throw Failure("missing config key GIT_CONFIG_KEY_\(index)", isError: true)
                }
                guard let value = variables["GIT_CONFIG_VALUE_\(index)"] else {
                    throw Failure("missing config value GIT_CONFIG_VALUE_\(index)", isError: true)
                }
                entries.append((try Self.canonical(key), value))
            }
        }
        if let parameters = variables["GIT_CONFIG_PARAMETERS"] {
            entries += try Self.parameters(Array(parameters.utf8))
        }
        return entries
    }

    /// `merge.conflictStyle` as git reads it for `repository`: every value in its config files, in order, then those
    /// of `git -c`; the last one counts, but each one is checked. Throws git's fatal message (with any error line
    /// before it) for a value git refuses.
    func conflictStyle(in repository: GitRepository) throws(Failure) -> TextMergeOptions.ConflictStyle? {
        let name = "merge.conflictstyle"
        var values: [String?]
        do {
            values = try repository.configValues(name, outsideFiles: outsideConfigFiles)
        } catch {
            throw Failure(error.errorDescription ?? "\(error)")
        }
        do {
            values += try commandLineConfig().filter { $0.name == name }.map(\.value)
        } catch {
            throw Failure("\(error.message)\nfatal: unable to parse command-line config", isError: true)
        }
        var style: TextMergeOptions.ConflictStyle?
        for value in values {
            guard let value else { throw Failure("'\(name)' is not a boolean") }
            guard let known = TextMergeOptions.ConflictStyle(rawValue: value) else { throw Failure("unknown style '\(value)' given for '\(name)'") }
            style = known
        }
        return style
    }

    /// A malformed environment variable, in git's words.
    struct Failure: Error {
        let message: String
        /// True when git says it as an `error:` line (then `fatal:` after it), false for a `fatal:` line alone.
        let isError: Bool
        init(_ message: String, isError: Bool = false) {
            self.message = message
            self.isError = isError
        }

        /// The lines git prints for it.
        var gitLines: String { (isError ? "error: " : "fatal: ") + message }
    }

    /// `GIT_CONFIG_PARAMETERS`: `'name'='value'` (or the old `'name=value'`) entries, shell-quoted, separated by spaces.
    static func parameters(_ bytes: [UInt8]) throws(Failure) -> [(name: String, value: String?)] {
        let bogus = Failure("bogus format in GIT_CONFIG_PARAMETERS", isError: true)
        var entries: [(name: String, value: String?)] = []
        var position = 0
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }
        while position < bytes.count {
            guard let (key, next) = dequote(bytes, from: position) else { throw bogus }
            position = next
            if position >= bytes.count || isSpace(bytes[position]) {
                // The old form, 'name=value': split at the first '='.
                let text = String(decoding: key, as: UTF8.self)
                if let equals = text.firstIndex(of: "=") {
                    entries.append(
                        (try canonical(String(text[..<equals]).trimmingCharacters(in: .whitespaces)), String(text[text.index(after: equals)...])))
                } else {
                    entries.append((try canonical(text.trimmingCharacters(in: .whitespaces)), nil))
                }
            } else if bytes[position] == UInt8(ascii: "=") {
                position += 1
                if position < bytes.count, bytes[position] == UInt8(ascii: "'") {
                    guard let (value, after) = dequote(bytes, from: position), after >= bytes.count || isSpace(bytes[after]) else { throw bogus }
                    entries.append((try canonical(String(decoding: key, as: UTF8.self)), String(decoding: value, as: UTF8.self)))
                    position = after
                } else if position >= bytes.count || isSpace(bytes[position]) {
                    entries.append((try canonical(String(decoding: key, as: UTF8.self)), nil))
                } else {
                    throw bogus
                }
            } else {
                throw bogus
            }
            while position < bytes.count, isSpace(bytes[position]) { position += 1 }
        }
        return entries
    }

    /// git's `sq_dequote_step`: one single-quoted word from `start` (outside quotes only `\'` and `\!` may appear,
    /// between quoted parts), and where the text after it starts; nil when it is not one.
    private static func dequote(_ bytes: [UInt8], from start: Int) -> ([UInt8], Int)? {
        guard start < bytes.count, bytes[start] == UInt8(ascii: "'") else { return nil }
        var word: [UInt8] = []
        var position = start + 1
        while true {
            guard position < bytes.count else { return nil }
            let byte = bytes[position]
            position += 1
            if byte != UInt8(ascii: "'") {
                word.append(byte)
                continue
            }
            // Out of the quotes: the word ends, unless a backslashed quote or '!' resumes it.
            if position + 2 < bytes.count + 0, bytes[position] == UInt8(ascii: "\\"),
                bytes[position + 1] == UInt8(ascii: "'") || bytes[position + 1] == UInt8(ascii: "!"),
                bytes[position + 2] == UInt8(ascii: "'")
            {
                word.append(bytes[position + 1])
                position += 3
                continue
            }
            return (word, position)
        }
    }

    /// A config name as git compares it: section and key lowercased, a subsection kept; git's message when invalid.
    static func canonical(_ name: String) throws(Failure) -> String {
        guard !name.isEmpty else { throw Failure("empty config key", isError: true) }
        guard let firstDot = name.firstIndex(of: "."), let lastDot = name.lastIndex(of: "."), name.index(after: lastDot) != name.endIndex
        else {
            throw Failure("key does not contain a section: \(name)", isError: true)
        }
        let section = name[..<firstDot].lowercased(), key = name[name.index(after: lastDot)...].lowercased()
        if firstDot == lastDot { return section + "." + key }
        return section + String(name[firstDot..<lastDot]) + "." + key
    }

    /// git's reading of a boolean environment variable (`1`, `true`, `yes`, `on`, any case).
    static func isTrue(_ value: String?) -> Bool {
        guard let value else { return false }
        if let number = Int(value) { return number != 0 }
        return ["true", "yes", "on"].contains(value.lowercased())
    }
}
