import Foundation
import TestSupport
import Testing

@testable import TruceCore
@testable import TruceGit

/// A version id is its own type, not an object id under another name, yet it reads, prints, orders and encodes
/// exactly as the commit id it wraps: apps' stored ids and the CLI's `--json` output stay what they were.
@Suite(.timeLimit(.minutes(10))) struct VersionIDTests {
    static func samples() -> [ObjectID] {
        objectIDByteSamples().map { ObjectID(bytes: $0[...]) }
    }

    @Test func hexShortAndDescriptionAreTheCommitIDs() throws {
        for objectID in Self.samples() {
            let version = VersionID(objectID)
            #expect(version.hex == objectID.hex)
            #expect(version.short == objectID.short)
            #expect(version.description == objectID.description)
            #expect(VersionID(hex: objectID.hex) == version)
            #expect(VersionID(hex: objectID.hex.uppercased())?.objectID == objectID)
            #expect(version.objectID == objectID)
        }
        #expect(VersionID(hex: "not an id") == nil)
        #expect(VersionID(hex: String(repeating: "a", count: 39)) == nil)
    }

    @Test func ordersAsTheCommitIDsDo() {
        let ids = Self.samples()
        #expect(ids.map(VersionID.init).sorted().map(\.objectID) == ids.sorted())
    }

    @Test func encodesAsTheCommitIDsHexString() throws {
        let ids = Self.samples()
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let asVersions = try encoder.encode(["ids": ids.map(VersionID.init)])
        #expect(asVersions == (try encoder.encode(["ids": ids])))
        #expect(asVersions == (try encoder.encode(["ids": ids.map(\.hex)])))
        #expect(try JSONDecoder().decode([String: [VersionID]].self, from: asVersions)["ids"]?.map(\.objectID) == ids)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([VersionID].self, from: Data(#"["abc"]"#.utf8)) }
    }

    @Test func aVersionsIdIsItsCommitsId() throws {
        let test = try TestStore()
        let version = try test.store.save(Data("one\n".utf8), to: "a.txt", device: "laptop")
        let commit = try test.store.withEngine { try $0.repository.readCommit(version.id.objectID) }
        #expect(commit.versionID == version.id)
        let head = try test.git("rev-parse", ReferenceLayout.headReference(of: "a.txt", version: version.id))
        #expect(head.trimmingCharacters(in: .whitespacesAndNewlines) == version.id.hex)
    }
}
