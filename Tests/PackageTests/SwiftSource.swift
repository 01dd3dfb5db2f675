import Foundation

/// A Swift file read for the package's rules: its code with comments and string literals blanked out (so a word in a
/// doc comment or a message never counts), and the declarations found in it.
///
/// Not a parser: enough of Swift's lexical rules for the shapes this package writes (line and block comments, string
/// literals with escapes and interpolation, multi-line and raw strings), tested on its own in `SwiftSourceTests`.
struct SwiftSource {
    /// The file's path from the package root.
    let path: String
    /// The code, same length and line breaks as the file, with every comment and string literal's contents as spaces.
    let code: [UInt8]

    init(path: String, text: String) {
        self.path = path
        code = Self.blankingCommentsAndStrings(Array(text.utf8))
    }

    /// The code as lines, for line numbers and counts.
    var lines: [Substring] { String(decoding: code, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false) }

    /// A function, initializer or property of `access` level with a body: its signature's first line and the body's
    /// lines between the braces.
    struct Declaration {
        let line: Int
        let signature: String
        let body: [Substring]
    }

    /// Every function, initializer, subscript or computed property declared `access` (`public`, `package`…), with its
    /// body.
    func declarations(_ access: String) -> [Declaration] {
        let text = String(decoding: code, as: UTF8.self)
        var found: [Declaration] = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.drop { $0 == " " }
            let kinds = ["func ", "init", "convenience init", "var ", "static func ", "static var ", "subscript"]
            guard trimmed.hasPrefix(access + " "), kinds.contains(where: { trimmed.dropFirst(access.count + 1).hasPrefix($0) }) else { continue }
            guard let open = Self.bodyStart(in: text, from: line.startIndex), let close = Self.matchingBrace(in: text, from: open) else { continue }
            let body = text[text.index(after: open)..<close].split(separator: "\n", omittingEmptySubsequences: false)
                .filter { !$0.allSatisfy(\.isWhitespace) }
            found.append(Declaration(line: number + 1, signature: String(trimmed), body: body))
        }
        return found
    }

    /// The first `{` after `start` outside parentheses and brackets: a function's body, or a computed property's.
    /// (Default arguments written as closures would be mistaken for the body; the facade has none.)
    private static func bodyStart(in text: String, from start: String.Index) -> String.Index? {
        var depth = 0
        var index = start
        while index < text.endIndex {
            switch text[index] {
            case "(", "[": depth += 1
            case ")", "]": depth -= 1
            case "{" where depth == 0: return index
            default: break
            }
            index = text.index(after: index)
        }
        return nil
    }

    private static func matchingBrace(in text: String, from open: String.Index) -> String.Index? {
        var depth = 0
        var index = open
        while index < text.endIndex {
            if text[index] == "{" { depth += 1 }
            if text[index] == "}" {
                depth -= 1
                if depth == 0 { return index }
            }
            index = text.index(after: index)
        }
        return nil
    }

    /// `bytes` with the contents of comments and string literals replaced by spaces, line breaks kept.
    static func blankingCommentsAndStrings(_ bytes: [UInt8]) -> [UInt8] {
        var out = bytes
        var index = 0
        let quote = UInt8(ascii: "\""), newline = UInt8(ascii: "\n")
        func blank(_ range: Range<Int>) {
            for position in range where out[position] != newline { out[position] = UInt8(ascii: " ") }
        }
        func at(_ position: Int, _ text: String) -> Bool {
            let pattern = Array(text.utf8)
            return position + pattern.count <= bytes.count && Array(bytes[position..<position + pattern.count]) == pattern
        }
        while index < bytes.count {
            if at(index, "//") {
                let end = bytes[index...].firstIndex(of: newline) ?? bytes.count
                blank(index..<end)
                index = end
            } else if at(index, "/*") {
                var depth = 0
                var end = index
                while end < bytes.count {
                    if at(end, "/*") {
                        depth += 1
                        end += 2
                    } else if at(end, "*/") {
                        depth -= 1
                        end += 2
                        if depth == 0 { break }
                    } else {
                        end += 1
                    }
                }
                blank(index..<end)
                index = end
            } else if bytes[index] == quote || (bytes[index] == UInt8(ascii: "#") && index + 1 < bytes.count && bytes[index + 1] == quote) {
                var hashes = 0
                while bytes[index + hashes] == UInt8(ascii: "#") { hashes += 1 }
                let start = index + hashes
                let multiline = at(start, "\"\"\"")
                let delimiter = (multiline ? "\"\"\"" : "\"") + String(repeating: "#", count: hashes)
                var end = start + (multiline ? 3 : 1)
                var interpolation = 0
                while end < bytes.count {
                    if interpolation > 0 {
                        if bytes[end] == UInt8(ascii: "(") { interpolation += 1 }
                        if bytes[end] == UInt8(ascii: ")") { interpolation -= 1 }
                        end += 1
                    } else if hashes == 0 && bytes[end] == UInt8(ascii: "\\") {
                        if end + 1 < bytes.count && bytes[end + 1] == UInt8(ascii: "(") { interpolation = 1 }
                        end += 2
                    } else if at(end, delimiter) {
                        end += delimiter.utf8.count
                        break
                    } else {
                        end += 1
                    }
                }
                blank(index..<min(end, bytes.count))
                index = end
            } else {
                index += 1
            }
        }
        return out
    }
}
