import Foundation
import TestSupport
import Testing

@testable import TruceCore

/// A list of changes held a field at a time gives back each change as appended, tells authors and keys apart by their
/// bytes, and a sync's report made from one reads and encodes as a list of changes.
@Suite struct ChangeListTests {
    /// Two spellings of one name (a precomposed and a decomposed é) that Swift calls equal and git does not.
    static let precomposed = "caf\u{E9}", decomposed = "cafe\u{301}"

    static func changes() throws -> [Change] {
        let authors = ["laptop", "laptop", precomposed, decomposed, "laptop", precomposed]
        let names = ["a", "notes/\(precomposed).md", "notes/\(decomposed).md", "a", "z/" + String(repeating: "long/", count: 60) + "end", "日記/1"]
        let keys = try names.map { name throws(TruceError) in try DocumentKey(name) }
        let kinds: [Change.Kind] = [.save, .delete, .resolution, .reopen, .save, .save]
        return keys.indices.map { index in
            let id = VersionID(hex: String(repeating: String(index + 1), count: 40))!
            return Change(
                kind: kinds[index], key: keys[index], version: id, author: authors[index], date: Date(timeIntervalSince1970: Double(index) * 1.5))
        }
    }

    @Test func eachChangeComesBackAsAppendedWithAuthorsAndKeysToldApartByTheirBytes() throws {
        let changes = try Self.changes()
        let list = ChangeList(changes)
        #expect(list.all == changes)
        #expect(list.all.map { Array($0.author.utf8) } == changes.map { Array($0.author.utf8) })
        #expect(list.all.map { Array($0.key.rawValue.utf8) } == changes.map { Array($0.key.rawValue.utf8) })
        #expect(list.documentCount == 5, "a twice; the two spellings of café are two documents")

        var appended = ChangeList(changes.prefix(2))
        appended.append(contentsOf: ChangeList(changes.dropFirst(2)))
        #expect(appended.all == changes)
        var intoEmpty = ChangeList()
        intoEmpty.append(contentsOf: list)
        #expect(intoEmpty.all == changes)
    }

    @Test func aSyncReportReadsAndEncodesWhatItReceivedAsChanges() async throws {
        let writer = try TestStore()
        for index in 0..<5 { try await writer.store.save(.text("\(index)"), to: DocumentKey("notes/\(index).txt")) }
        let reader = try TestStore()
        let report = try await reader.store.sync(with: writer.path)
        let received = report.received
        #expect(received.count == 5 && report.receivedCount == 5)
        #expect(received.map(\.version) == (try reader.store.changes().changes.map(\.version)))
        #expect(report.traffic.documentsAdopted == 5)

        let json = try JSONEncoder().encode(report)
        let object = try #require(JSONSerialization.jsonObject(with: json) as? [String: Any])
        let listed = try #require(object["received"] as? [[String: Any]])
        #expect(listed.map { $0["version"] as? String } == received.map(\.version.hex))
        #expect(listed.map { $0["key"] as? String } == received.map(\.key.rawValue))
        let decoded = try JSONDecoder().decode(SyncReport.self, from: json)
        #expect(decoded.received == received)
        #expect(decoded.traffic == report.traffic && decoded.remote == report.remote && decoded.sent == report.sent)
    }
}
