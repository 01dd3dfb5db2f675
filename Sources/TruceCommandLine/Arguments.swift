/// A command's words after parsing: positionals in order, options by name.
///
/// Words arrive as the bytes the system passed. Every word must be UTF-8 text
/// except the ones a command reads as file names (`Option.path`,
/// `Command.pathPositionals`): git and the file system take any bytes there,
/// and decoding them would turn `\xff.md` and `\xfe.md` into one U+FFFD name.
struct Arguments {
    /// The positionals as text; a file-name positional that is not UTF-8 holds its lossy decoding (read `path(at:)`).
    var positionals: [String] = []
    private(set) var positionalBytes: [[UInt8]] = []
    private(set) var values: [String: [String]] = [:]
    private(set) var pathValues: [String: [[UInt8]]] = [:]
    private(set) var flags: Set<String> = []

    /// The file name given as positional `index`, as bytes.
    func path(at index: Int) -> [UInt8]? { index < positionalBytes.count ? positionalBytes[index] : nil }
    /// The file name given for a path option `--name`, as bytes.
    func path(_ name: String) -> [UInt8]? { pathValues[name]?.last }

    /// The last value given for `--name`, nil when absent.
    func value(_ name: String) -> String? { values[name]?.last }
    /// Every value given for a repeatable `--name`, in order.
    func all(_ name: String) -> [String] { values[name] ?? [] }
    func has(_ flag: String) -> Bool { flags.contains(flag) }

    /// Parses `words` against the options a command declares; `--` ends options, `-` is a positional.
    ///
    /// Accepts `--name value` and `--name=value` for options that take a value.
    static func parse(_ words: [[UInt8]], options: [Option], pathPositionals: Set<Int> = [], command: String) throws(UsageError) -> Arguments {
        var result = Arguments()
        func addPositional(_ bytes: [UInt8]) throws(UsageError) {
            let text = try Self.text(
                bytes, isPath: pathPositionals.contains(result.positionals.count),
                what: "argument \(result.positionals.count + 1)")
            result.positionals.append(text)
            result.positionalBytes.append(bytes)
        }
        var index = 0
        while index < words.count {
            let bytes = words[index]
            let word = String(decoding: bytes, as: UTF8.self)
            index += 1
            if word == "--" {
                for bytes in words[index...] { try addPositional(bytes) }
                break
            }
            guard word.hasPrefix("-"), word != "-" else {
                try addPositional(bytes)
                continue
            }
            var name = word
            var inlineValue: [UInt8]?
            // At the byte '=': a mark after it would hide it inside one Character.
            if word.hasPrefix("--"), let equals = bytes.firstIndex(of: UInt8(ascii: "=")) {
                name = String(decoding: bytes[..<equals], as: UTF8.self)
                inlineValue = Array(bytes[(equals + 1)...])
            }
            guard let option = options.first(where: { $0.names.contains(name) }) else {
                throw UsageError("unknown option '\(name)' for '\(command)'")
            }
            if option.takesValue {
                let value: [UInt8]
                if let inlineValue {
                    value = inlineValue
                } else {
                    guard index < words.count else { throw UsageError("option '\(name)' needs a value") }
                    value = words[index]
                    index += 1
                }
                result.values[option.names[0], default: []].append(try Self.text(value, isPath: option.takesPath, what: "the value of '\(name)'"))
                if option.takesPath { result.pathValues[option.names[0], default: []].append(value) }
            } else {
                guard inlineValue == nil else { throw UsageError("option '\(name)' takes no value") }
                result.flags.insert(option.names[0])
            }
        }
        return result
    }

    /// `bytes` as text; a word that is not UTF-8 is refused unless it is a file name, which keeps its bytes.
    private static func text(_ bytes: [UInt8], isPath: Bool, what: String) throws(UsageError) -> String {
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        guard isPath else {
            throw UsageError("\(what) '\(String(decoding: bytes, as: UTF8.self))' is not valid UTF-8; keys, names and options are UTF-8 text")
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// One option a command accepts: its spellings (first is canonical) and whether it takes a value.
struct Option {
    let names: [String]
    let takesValue: Bool
    let help: String
    /// The value is a file name: any bytes, not only UTF-8.
    var takesPath = false

    static func value(_ names: String..., help: String) -> Option { Option(names: names, takesValue: true, help: help) }
    static func path(_ names: String..., help: String) -> Option { Option(names: names, takesValue: true, help: help, takesPath: true) }
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
