import Foundation

/// One valid JSON document of the corpus, and where its scalars' bytes are.
public struct CorpusDocument: Sendable {
    public let bytes: Data
    /// Every scalar (string, number, literal): its bytes, and whether every step to it from the top is an object
    /// member (so a merge matches it by keys alone, never by position in an array).
    public let scalars: [(range: Range<Int>, throughObjectsOnly: Bool)]

    /// The document with scalar `index`'s bytes replaced by `text`.
    public func replacing(_ index: Int, with text: String) -> Data {
        var copy = bytes
        copy.replaceSubrange(scalars[index].range, with: Data(text.utf8))
        return copy
    }

    /// The document with two scalars' bytes replaced (either order).
    public func replacing(_ first: Int, with firstText: String, _ second: Int, with secondText: String) -> Data {
        let ordered = [(first, firstText), (second, secondText)].sorted { scalars[$0.0].range.lowerBound > scalars[$1.0].range.lowerBound }
        var copy = bytes
        for (index, text) in ordered { copy.replaceSubrange(scalars[index].range, with: Data(text.utf8)) }
        return copy
    }
}

/// Valid JSON written the many ways people and tools write it, seeded: what a merge that keeps untouched bytes must
/// write back exactly. Whitespace of every kind in every gap (spaces, tabs, CRLF, none, a blank line), numbers spelled
/// every way JSON allows (`-0`, `1E2`, `-1.0e+28`, 30 digits), strings with every escape (`\/`, `\u00e9`, surrogate
/// pairs) and raw UTF-8, empty containers with whitespace inside (`[[]   ]`), keys that repeat, scalars at the top.
public enum JSONCorpus {
    /// Shapes JSON parsing suites hold (nst/JSONTestSuite's `y_` files among them) that a merge tool is known to rewrite.
    public static let shapes: [String] = [
        " [1]", "[[]   ]", "{\"a\":\n\"b\"}", "[-1.0e+28]", "[1E22]", "[-0]", "[0e+1]", "[1.5e-9]", " {} ", "[ ]", "{ \"a\" : [ ] }",
        "[\"\\u0060\\u012a\\u12AB\"]", "[\"\\ud83d\\ude00\"]", "[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"]", "[\"new\\u000Aline\"]", "[\"€𝄞\"]",
        "{\"a\":\"b\",\"a\":\"c\"}", "{\"a\":1,\"a\":1}", "123", "\"str\"", "null", " true ", "[1,\n2 ,3\t,4]", "{\r\n  \"x\": 1\r\n}\r\n",
        "[\n  [\n    []\n  ]\n]\n", "{\"\":0}", "{\"a\\/b\":[false,null]}", "[123456789012345678901234567890]", "[1.000000000000000005]",
        "\n\n[\"two leading lines\"]\n\n", "{\n\t\"tabs\": [\n\t\t1,\n\t\t2\n\t]\n}", "[{},{ },{\n}]",
    ]

    /// `count` documents from `seed`: the same ones on every machine.
    public static func generate(count: Int, seed: UInt64) -> [CorpusDocument] {
        var writer = Writer(random: SeededRandom(seed: seed))
        return (0..<count).map { _ in writer.document() }
    }

    private struct Writer {
        var random: SeededRandom
        var bytes: [UInt8] = []
        var scalars: [(range: Range<Int>, throughObjectsOnly: Bool)] = []
        /// A layout for the whole document, or nil to choose each gap's whitespace on its own.
        var indent: String?
        var newline = "\n"

        init(random: SeededRandom) { self.random = random }

        static let gaps = ["", " ", "  ", "\t", "\n", "\n  ", "\n\t", "\r\n", "\r\n    ", " \n ", "\n\n", "   "]
        static let words = ["alpha", "beta", "gamma", "name", "value", "list", "x", "y", "Z", "dép", "键", "a b", "", "with\\\"quote", "tab\\t"]
        static let numbers = [
            "0", "-0", "1", "-1", "42", "1.5", "1.50", "-1.0e+28", "1E2", "1e-7", "0.0", "-0.0e0", "3.141592653589793",
            "123456789012345678901234567890", "0.1e1", "-9007199254740993", "2.5E-3",
        ]
        static let stringParts = [
            "plain", " spaced out ", "\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t", "\\u0041", "\\u00e9", "\\u00E9", "\\ud83d\\ude00",
            "\\u2028", "é", "日本", "😀", "", "<<<<<<< not a marker", "=======",
        ]

        mutating func document() -> CorpusDocument {
            (bytes, scalars) = ([], [])
            let layoutRoll = random.int(0...2)
            indent = layoutRoll == 0 ? nil : random.pick(["  ", "    ", "\t"])
            newline = random.chance(20) ? "\r\n" : "\n"
            if random.chance(25) { append(random.pick(Self.gaps)) }
            if random.chance(10) {
                scalar(throughObjectsOnly: true)
            } else {
                container(depth: 0, throughObjectsOnly: true)
            }
            append(random.pick(["", "\n", "\n", "\r\n", " ", "\n\n", "\t\n"]))
            return CorpusDocument(bytes: Data(bytes), scalars: scalars)
        }

        mutating func append(_ text: String) { bytes += Array(text.utf8) }

        /// The whitespace of one gap at `depth`: the document's layout, else anything.
        mutating func gap(_ depth: Int, closing: Bool = false) {
            guard let indent else {
                append(random.pick(Self.gaps))
                return
            }
            append(newline + String(repeating: indent, count: closing ? depth : depth + 1))
        }

        mutating func container(depth: Int, throughObjectsOnly: Bool) {
            let isObject = random.chance(depth == 0 ? 85 : 60)
            let count = depth >= 4 ? 0 : random.int(0...(depth == 0 ? 7 : 4))
            append(isObject ? "{" : "[")
            if count == 0 {
                append(random.pick(["", "", " ", "   ", "\n", "\n\n  "]))
                append(isObject ? "}" : "]")
                return
            }
            var keys: [String] = []
            for index in 0..<count {
                if index > 0 {
                    if indent == nil && random.chance(15) { append(random.pick([" ", "\t"])) }
                    append(",")
                }
                gap(depth)
                if isObject {
                    // A key repeats now and then: JSON allows it.
                    let key = !keys.isEmpty && random.chance(6) ? random.pick(keys) : random.pick(Self.words) + String(random.int(0...20))
                    keys.append(key)
                    append("\"" + key + "\"")
                    append(indent == nil ? random.pick(["", " ", "\t"]) : "")
                    append(":")
                    append(indent == nil ? random.pick(["", " ", "  ", "\n"]) : " ")
                }
                if depth < 4 && random.chance(35) {
                    container(depth: depth + 1, throughObjectsOnly: throughObjectsOnly && isObject)
                } else {
                    scalar(throughObjectsOnly: throughObjectsOnly && isObject)
                }
            }
            gap(depth, closing: true)
            append(isObject ? "}" : "]")
        }

        mutating func scalar(throughObjectsOnly: Bool) {
            let start = bytes.count
            switch random.int(0...9) {
            case 0...3:
                append("\"" + (0..<random.int(0...3)).map { _ in random.pick(Self.stringParts) }.joined() + "\"")
            case 4...7:
                append(random.chance(50) ? random.pick(Self.numbers) : String(random.int(-100_000...100_000)))
            default:
                append(random.pick(["true", "false", "null"]))
            }
            scalars.append((start..<bytes.count, throughObjectsOnly))
        }
    }
}
