/// Words parsed as git's parse-options parses them, for a command that stands in for a git command (`merge-file`).
///
/// Options and positionals mix in any order; `--` ends options and `-` is a
/// positional. A long option may be abbreviated to any unique prefix and
/// takes its value as `--name=value` or `--name value`; a negatable one has a
/// `--no-name` form. Short options bundle (`-pq`) and take a value stuck on
/// (`-Lname`) or as the next word.
struct GitStyleOptions {
    /// One option a command accepts.
    struct Option {
        let long: String?
        let short: UInt8?
        let takesValue: Bool
        /// True when `--no-<long>` is accepted.
        let negatable: Bool

        static func flag(_ long: String?, short: Character? = nil, negatable: Bool = true) -> Option {
            Option(long: long, short: short?.asciiValue, takesValue: false, negatable: negatable)
        }

        static func value(_ long: String?, short: Character? = nil, negatable: Bool = false) -> Option {
            Option(long: long, short: short?.asciiValue, takesValue: true, negatable: negatable)
        }

        /// The name events use: the long name, else the short one.
        var name: String { long ?? String(UnicodeScalar(short!)) }
    }

    /// What the words said, in order: later events override earlier ones as the command decides.
    enum Event: Equatable {
        case set(String)
        case unset(String)
        case value(String, [UInt8])
    }

    /// A word git's parse-options would refuse; `message` is git's wording.
    struct Failure: Error {
        let message: String
    }

    private(set) var events: [Event] = []
    private(set) var positionals: [[UInt8]] = []

    /// Parses `words` (without the command's name) against `options`.
    init(_ words: [[UInt8]], options: [Option]) throws(Failure) {
        var index = 0
        while index < words.count {
            let word = words[index]
            index += 1
            if word == Array("--".utf8) {
                positionals += words[index...]
                break
            }
            guard word.count > 1, word[0] == UInt8(ascii: "-") else {
                positionals.append(word)
                continue
            }
            if word[1] == UInt8(ascii: "-") {
                try parseLong(Array(word.dropFirst(2)), words, &index, options)
            } else {
                try parseShort(Array(word.dropFirst()), words, &index, options)
            }
        }
    }

    private mutating func parseLong(_ body: [UInt8], _ words: [[UInt8]], _ index: inout Int, _ options: [Option]) throws(Failure) {
        let equals = body.firstIndex(of: UInt8(ascii: "="))
        let name = String(decoding: equals.map { body[..<$0] } ?? body[...], as: UTF8.self)
        let inline = equals.map { Array(body[($0 + 1)...]) }
        // Every spelling a long option has: its name, and `no-name` when it can be negated.
        var spellings: [(spelling: String, option: Option, negated: Bool)] = []
        for option in options {
            guard let long = option.long else { continue }
            spellings.append((long, option, false))
            if option.negatable { spellings.append(("no-" + long, option, true)) }
        }
        let matched: (spelling: String, option: Option, negated: Bool)
        if let exact = spellings.first(where: { $0.spelling == name }) {
            matched = exact
        } else {
            let candidates = spellings.filter { $0.spelling.hasPrefix(name) }
            guard let first = candidates.first else { throw Failure(message: "unknown option `\(name)'") }
            if candidates.count > 1 {
                throw Failure(
                    message: "ambiguous option: \(name) (could be --\(candidates[0].spelling) or --\(candidates[1].spelling))")
            }
            matched = first
        }
        let option = matched.option
        if matched.negated {
            guard inline == nil else { throw Failure(message: "option `\(matched.spelling)' takes no value") }
            events.append(.unset(option.name))
        } else if option.takesValue {
            if let inline {
                events.append(.value(option.name, inline))
            } else {
                guard index < words.count else { throw Failure(message: "option `\(option.long!)' requires a value") }
                events.append(.value(option.name, words[index]))
                index += 1
            }
        } else {
            guard inline == nil else { throw Failure(message: "option `\(option.long!)' takes no value") }
            events.append(.set(option.name))
        }
    }

    private mutating func parseShort(_ letters: [UInt8], _ words: [[UInt8]], _ index: inout Int, _ options: [Option]) throws(Failure) {
        var position = 0
        while position < letters.count {
            let letter = letters[position]
            position += 1
            guard let option = options.first(where: { $0.short == letter }) else {
                throw Failure(message: "unknown switch `\(String(decoding: [letter], as: UTF8.self))'")
            }
            guard option.takesValue else {
                events.append(.set(option.name))
                continue
            }
            // The rest of the word is the value; else the next word.
            if position < letters.count {
                events.append(.value(option.name, Array(letters[position...])))
            } else {
                guard index < words.count else {
                    throw Failure(message: "switch `\(String(decoding: [letter], as: UTF8.self))' requires a value")
                }
                events.append(.value(option.name, words[index]))
                index += 1
            }
            return
        }
    }
}
