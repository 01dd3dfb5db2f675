import Foundation
import TestSupport
import Testing

@testable import TruceCore

/// An import's report holds the versions it wrote as one buffer of key bytes and one of ids, and gives back each key
/// and version exactly as written, in the report and in its JSON.
@Suite struct KeyedVersionsTests {
    /// Keys of one byte, of many, of letters outside ASCII and of a decomposed accent (never made canonical), in three
    /// batches of two.
    static let keys = [
        "a", "notes/été.md", "notes/e\u{301}te\u{301}.md", "z/" + String(repeating: "long/", count: 60) + "end.txt", "日記/1", "\u{1F600}.txt",
    ]

    @Test func aReportGivesBackEachKeyAndVersionAsWritten() throws {
        let test = try TestStore()
        var stream = Data()
        for key in Self.keys {
            let content = Data("of \(key)".utf8)
            stream.append(Data("M 100644 inline \(key)\ndata \(content.count)\n".utf8) + content + Data("\n".utf8))
        }
        let report = try Importing(access: test.store.access, author: "laptop", date: Date()).run(
            .stream(stream), progress: nil, saving: nil, cancellation: nil, documentsPerBatch: 2)
        let versions = report.versions
        let inByteOrder = Self.keys.map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
        #expect(versions.map { Array($0.key.rawValue.utf8) } == inByteOrder)
        #expect(report.newVersions == Self.keys.count)
        for version in versions {
            #expect(try test.store.versions(of: version.key).current?.id == version.version, "\(version.key)")
        }

        let json = try JSONEncoder().encode(report)
        let object = try #require(JSONSerialization.jsonObject(with: json) as? [String: Any])
        let listed = try #require(object["versions"] as? [[String: String]])
        #expect(listed.map { $0["key"] } == versions.map(\.key.rawValue))
        #expect(listed.map { $0["version"] } == versions.map(\.version.hex))
        let decoded = try JSONDecoder().decode(ImportReport.self, from: json)
        #expect(decoded.versions == versions)
        #expect((decoded.documents, decoded.newVersions, decoded.unchanged) == (report.documents, report.newVersions, report.unchanged))
    }

    /// Hundreds of keys of every length up to the longest a key may be, each given back with its version: a key's place
    /// is summed from the start noted every 64 keys, and an id kept as its 20 bytes.
    @Test func everyKeyAndVersionComesBackPastManyStarts() throws {
        var list = KeyedVersions()
        var appended: [(key: DocumentKey, version: VersionID)] = []
        for index in 0..<300 {
            // Its bytes: the index, then letters of one byte or of two, up to `length` (the last, the longest allowed).
            let prefix = "\(index)/"
            let length = index == 299 ? DocumentKey.maximumLength : prefix.utf8.count + 1 + (index * 37) % 200
            let rest = length - prefix.utf8.count
            let body = index % 2 == 0 ? String(repeating: "k", count: rest) : String(repeating: "é", count: rest / 2) + (rest % 2 == 1 ? "x" : "")
            let key = try DocumentKey(prefix + body)
            #expect(key.rawValue.utf8.count == length)
            let version = VersionID(hex: String(repeating: String(format: "%02x", index % 256), count: 20))!
            list.append(key, version)
            appended.append((key, version))
        }
        // The same key twice counts once.
        list.append(appended[5].key, appended[6].version)
        #expect(list.count == 301 && list.distinctKeyCount == 300)
        for (position, entry) in appended.enumerated() {
            #expect(Array(list.key(at: position).rawValue.utf8) == Array(entry.key.rawValue.utf8) && list.version(at: position) == entry.version)
        }
        #expect(list.key(at: 300) == appended[5].key && list.version(at: 300) == appended[6].version)
    }
}
