import Foundation
import Testing

/// `Sources/TruceGit/README.md` lists the files that re-implement a git format, and each of those files says so in
/// one marker line at the top of a doc comment: the two must name the same files, formats and documents.
@Suite(.timeLimit(.minutes(10))) struct GitFormatFilesTests {
    static let root = LayeringTests.root
    static let gitLayer = "Sources/TruceGit/"
    static let heading = "## Files that re-implement a git format"

    /// A row of the README's table: the file (from `Sources/TruceGit/`), its format and the git document it follows.
    struct Row: Hashable, CustomStringConvertible {
        let file: String, format: String, document: String
        var description: String { "\(file): \(format) (\(document))" }
    }

    /// The rows of the table under `heading`.
    static func tableRows(of readme: String) throws -> [Row] {
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let start = try #require(lines.firstIndex(of: heading), "no '\(heading)' in the README")
        let table = lines[(start + 1)...].drop { !$0.hasPrefix("|") }.prefix { $0.hasPrefix("|") }
        let rows = try table.dropFirst(2).map { line in
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
                .map { $0.trimmingCharacters(in: .whitespaces) }
            try #require(cells.count == 3 && cells[0].hasPrefix("`") && cells[0].hasSuffix("`"), "not a row of three cells, a file first: \(line)")
            return Row(file: String(cells[0].dropFirst().dropLast()), format: cells[1], document: cells[2])
        }
        try #require(table.first.map { $0.contains("File") } == true && !rows.isEmpty, "the table under '\(heading)' has no rows")
        return rows
    }

    /// What a marker line says, nil when `line` is none; `line` without its indentation.
    static func marker(_ line: String) -> (format: String, document: String)? {
        let opening = "/// Re-implements git's ", closing = "): byte-compatible with git, listed in TruceGit/README.md."
        guard line.hasPrefix(opening), line.hasSuffix(closing) else { return nil }
        let inner = line.dropFirst(opening.count).dropLast(closing.count)
        guard let open = inner.lastIndex(of: "(") else { return nil }
        let format = inner[..<open].trimmingCharacters(in: .whitespaces), document = String(inner[inner.index(after: open)...])
        return format.isEmpty || document.isEmpty || document.contains(")") ? nil : (format, document)
    }

    /// Every file under `Sources` and `Plugins` that mentions a marker, with its marker lines as rows (a line that
    /// mentions one without its exact form gives the format "malformed"), and those that do not start a doc comment.
    static func markedFiles() throws -> (rows: [Row], misplaced: [String]) {
        var rows: [Row] = [], misplaced: [String] = []
        for folder in ["Sources", "Plugins"] {
            let base = root.appendingPathComponent(folder)
            let files = try #require(FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil)?.allObjects as? [URL])
            for file in files where file.pathExtension == "swift" {
                let path = folder + "/" + file.path.dropFirst(base.path.count + 1)
                let file = path.hasPrefix(gitLayer) ? String(path.dropFirst(gitLayer.count)) : path
                let lines = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8).split(
                    separator: "\n", omittingEmptySubsequences: false)
                for (number, line) in lines.enumerated() where line.contains("Re-implements git's") {
                    let text = line.trimmingCharacters(in: .whitespaces)
                    guard let said = marker(text) else {
                        rows.append(Row(file: file, format: "malformed", document: text))
                        continue
                    }
                    rows.append(Row(file: file, format: said.format, document: said.document))
                    let before = number > 0 ? lines[number - 1].trimmingCharacters(in: .whitespaces) : ""
                    let after = number + 1 < lines.count ? lines[number + 1].trimmingCharacters(in: .whitespaces) : ""
                    if before.hasPrefix("///") || !after.hasPrefix("///") { misplaced.append("\(path):\(number + 1)") }
                }
            }
        }
        return (rows, misplaced)
    }

    @Test func theReadmeTableAndTheMarkersNameTheSameFiles() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent(Self.gitLayer + "README.md"), encoding: .utf8)
        let table = try Self.tableRows(of: readme)
        #expect(Set(table.map(\.file)).count == table.count, "a file listed twice: \(table.map(\.file))")
        for row in table {
            #expect(
                FileManager.default.fileExists(atPath: Self.root.appendingPathComponent(Self.gitLayer + row.file).path),
                "listed, not there: \(row.file)")
        }
        let (marked, misplaced) = try Self.markedFiles()
        #expect(Set(marked.map(\.file)).count == marked.count, "a file with more than one marker: \(marked)")
        let tableRows = Set(table), markedRows = Set(marked)
        #expect(tableRows.subtracting(markedRows).isEmpty, "listed in the README without its marker: \(tableRows.subtracting(markedRows))")
        #expect(markedRows.subtracting(tableRows).isEmpty, "marked, not listed in the README: \(markedRows.subtracting(tableRows))")
        #expect(misplaced.isEmpty, "a marker that does not start a doc comment: \(misplaced)")
        // The scan sees the files it should, so an agreement is not two empty lists.
        #expect(table.count >= 10 && table.contains { $0.file == "Packs/PackWriter.swift" })
    }

    /// The reading of the table and the markers, on a README and lines made for it: a wrong marker is not read as a right one.
    @Test func markersAndRowsAreReadAsWritten() throws {
        let readme =
            "# T\n\n\(Self.heading)\n\nSome words.\n\n| File | Format | Git document |\n| --- | --- | --- |\n"
            + "| `Packs/A.swift` | pack (version 2), written | gitformat-pack |\n| `Refs/B.swift` | packed-refs file | git-pack-refs, refs/x.c |\n\nAfter.\n"
        #expect(
            try Self.tableRows(of: readme) == [
                Row(file: "Packs/A.swift", format: "pack (version 2), written", document: "gitformat-pack"),
                Row(file: "Refs/B.swift", format: "packed-refs file", document: "git-pack-refs, refs/x.c"),
            ])
        let good = "/// Re-implements git's pack (version 2), written (gitformat-pack): byte-compatible with git, listed in TruceGit/README.md."
        #expect(Self.marker(good)?.format == "pack (version 2), written" && Self.marker(good)?.document == "gitformat-pack")
        #expect(Self.marker(good.replacingOccurrences(of: "byte-compatible", with: "compatible")) == nil)
        #expect(Self.marker("/// Re-implements git's pack: byte-compatible with git, listed in TruceGit/README.md.") == nil)
        #expect(Self.marker("// " + good.dropFirst(4)) == nil)
    }
}
