/// A command's words after parsing: positionals in order, options by name.
struct Arguments {
    var positionals: [String] = []
    private(set) var values: [String: [String]] = [:]
    private(set) var flags: Set<String> = []

    /// The last value given for `--name`, nil when absent.
    func value(_ name: String) -> String? { values[name]?.last }
    /// Every value given for a repeatable `--name`, in order.
    func all(_ name: String) -> [String] { values[name] ?? [] }
    func has(_ flag: String) -> Bool { flags.contains(flag) }

    /// Parses `words` against the options a command declares; `--` ends options, `-` is a positional.
    ///
    /// Accepts `--name value` and `--name=value` for options that take a value.
    static func parse(_ words: [String], options: [Option], command: String) throws(UsageError) -> Arguments {
        var result = Arguments()
        var index = 0
        while index < words.count {
            let word = words[index]
            index += 1
            if word == "--" {
                result.positionals += words[index...]
                break
            }
            guard word.hasPrefix("-"), word != "-" else {
                result.positionals.append(word)
                continue
            }
            var name = word
            var inlineValue: String?
            if let equals = word.firstIndex(of: "="), word.hasPrefix("--") {
                name = String(word[..<equals])
                inlineValue = String(word[word.index(after: equals)...])
            }
            guard let option = options.first(where: { $0.names.contains(name) }) else {
                throw UsageError("unknown option '\(name)' for '\(command)'")
            }
            if option.takesValue {
                let value: String
                if let inlineValue {
                    value = inlineValue
                } else {
                    guard index < words.count else { throw UsageError("option '\(name)' needs a value") }
                    value = words[index]
                    index += 1
                }
                result.values[option.names[0], default: []].append(value)
            } else {
                guard inlineValue == nil else { throw UsageError("option '\(name)' takes no value") }
                result.flags.insert(option.names[0])
            }
        }
        return result
    }
}

/// One option a command accepts: its spellings (first is canonical) and whether it takes a value.
struct Option {
    let names: [String]
    let takesValue: Bool
    let help: String

    static func value(_ names: String..., help: String) -> Option { Option(names: names, takesValue: true, help: help) }
    static func flag(_ names: String..., help: String) -> Option { Option(names: names, takesValue: false, help: help) }

    static let store = Option.value("--store", help: "the store directory (default: $TRUCE_STORE, then ./.truce)")
    static let json = Option.flag("--json", help: "print a JSON document instead of text")
    static let help = Option.flag("--help", "-h", help: "show this command's help")
}

/// The command line was wrong: exit code 2 and a pointer to the help.
struct UsageError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
