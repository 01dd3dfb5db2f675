import Foundation
import Testing

/// `DocumentStore` is a facade: each public method is a few lines over a session or one use case of the engine, which
/// hold the policy; and nothing under the facade names it. Read from the sources, as `LayeringTests` reads imports.
@Suite struct FacadeTests {
    /// How many lines a public method of the facade may hold: a call, and room for its arguments.
    static let mostLinesPerMethod = 4
    /// Statements that decide: a facade method that holds one holds policy.
    static let deciding: Set<String> = ["if", "guard", "for", "while", "switch", "repeat", "catch"]

    /// The statements of `lines` that decide: their keywords, but not an argument label (`for: key`, a keyword
    /// followed by `:`) nor a member (after `.`).
    static func decisions(in lines: [Substring]) -> [String] {
        lines.flatMap { line in
            words(line).filter { word in
                let before = line[..<word.startIndex].last { $0 != " " }
                let after = line[word.endIndex...].first { $0 != " " }
                return deciding.contains(String(word)) && before != "." && after != ":"
            }.map(String.init)
        }
    }

    static func sources(under folder: String) throws -> [SwiftSource] {
        let base = LayeringTests.root.appendingPathComponent(folder)
        let files = try #require(FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil)?.allObjects as? [URL])
        return try files.filter { $0.pathExtension == "swift" }.map { file in
            SwiftSource(path: folder + "/" + file.path.dropFirst(base.path.count + 1), text: try String(contentsOf: file, encoding: .utf8))
        }
    }

    /// The words of `line`, split at everything that is not part of an identifier.
    static func words(_ line: Substring) -> [Substring] {
        line.split { !($0.isLetter || $0.isNumber || $0 == "_") }
    }

    @Test func everyPublicMethodOfTheFacadeIsAFewLinesWithoutDecisions() throws {
        let methods = try Self.sources(under: "Sources/TruceCore/Store").flatMap { source in
            source.declarations("public").map { (source.path, $0) }
        }
        // The scan finds the facade: an empty list would pass anything.
        #expect(methods.count > 40)
        for (path, method) in methods {
            #expect(
                method.body.count <= Self.mostLinesPerMethod,
                "\(path):\(method.line): \(method.signature) has \(method.body.count) lines; move the work into a session or a use case")
            let decisions = Self.decisions(in: method.body)
            #expect(decisions.isEmpty, "\(path):\(method.line): \(method.signature) decides (\(decisions)); that is the engine's policy")
        }
    }

    @Test func nothingUnderTheFacadeNamesIt() throws {
        let below = try Self.sources(under: "Sources/TruceCore").filter { !$0.path.hasPrefix("Sources/TruceCore/Store/") }
        #expect(below.count > 50)
        for source in below {
            for (number, line) in source.lines.enumerated() where Self.words(line).contains("DocumentStore") {
                Issue.record("\(source.path):\(number + 1) names DocumentStore: the engine must not know the facade")
            }
        }
    }
}
