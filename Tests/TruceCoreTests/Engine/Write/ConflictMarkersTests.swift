import Foundation
import TestSupport
import Testing

@testable import TruceCore
@testable import TruceGit

/// A conflict marker per document in conflict, moved for many documents in one rewrite of `packed-refs`.
@Suite(.timeLimit(.minutes(5))) struct ConflictMarkersTests {
    static let count = 20

    /// `count` documents, each with two heads that three-way merges cleanly, written by two batches.
    static func conflictedByBatches(_ test: TestStore) throws -> [DocumentKey] {
        let keys = PackedHeadsTests.keys(count)
        let bases = try test.store.saveBatch(keys.map { BatchSave(key: $0, content: .text("a\nb\nc\n"), device: "origin") })
        _ = try test.store.saveBatch(
            keys.indices.flatMap { index in
                [
                    BatchSave(key: keys[index], content: .text("A\nb\nc\n"), device: "laptop"),
                    BatchSave(key: keys[index], content: .text("a\nb\nC\n"), device: "phone", base: bases[index]),
                ]
            })
        return keys
    }

    static func markers(in test: TestStore) throws -> [String] {
        try test.git("for-each-ref", "--format=%(refname)", ConflictMarkers.root).split(separator: "\n").map(String.init)
    }

    static func looseMarkerFiles(in test: TestStore) -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: test.path + "/" + ConflictMarkers.root)
        var files: [String] = []
        while let relative = enumerator?.nextObject() as? String {
            if enumerator?.fileAttributes?[.type] as? FileAttributeType == .typeRegular { files.append(relative) }
        }
        return files
    }

    @Test func aBatchSetsItsMarkersAsPackedLinesAndResolvingDeletesThemWithTheLooseOnes() async throws {
        let test = try TestStore()
        let keys = try Self.conflictedByBatches(test)
        #expect(Set(try Self.markers(in: test)) == Set(keys.map(ConflictMarkers.marker(of:))))
        #expect(Self.looseMarkerFiles(in: test).isEmpty, "a batch left its markers as loose files")
        // Each marker points at one of its document's heads, as git reads them.
        for key in keys {
            let marked = try test.git("rev-parse", ConflictMarkers.marker(of: key)).trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(try test.git("for-each-ref", "--format=%(objectname)", ReferenceLayout.headsDirectory(of: key)).contains(marked))
        }
        // One more conflict, by single saves: its marker is a loose file.
        let single: DocumentKey = "notes/single.txt"
        try test.makeConflict(single, base: .text("a\nb\nc\n"), heads: [("laptop", .text("A\nb\nc\n")), ("phone", .text("a\nb\nC\n"))])
        #expect(Self.looseMarkerFiles(in: test).count == 1)
        #expect(Set(try test.store.documentsInConflict().map(\.key)) == Set(keys + [single]))

        let results = try await test.store.resolveAll(device: "laptop")
        #expect(results.count == keys.count + 1)
        #expect(try test.store.documentsInConflict().isEmpty)
        #expect(try Self.markers(in: test).isEmpty)
        #expect(Self.looseMarkerFiles(in: test).isEmpty)
        #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)
    }

    /// A marker deleted on a read that another writer's head made stale is set again: the documents read with one
    /// head here (their second head not seen) have two, and only those where a head really went lose their marker.
    @Test func aMarkerDeletedOnAStaleReadIsSetAgain() throws {
        let test = try TestStore()
        let keys = try Self.conflictedByBatches(test)
        let settled = Set(keys.indices.filter { $0.isMultiple(of: 2) }.map { keys[$0] })
        let staleReads = try test.store.withEngine { engine in
            try Dictionary(
                uniqueKeysWithValues: keys.map { key in
                    let heads = try engine.headReferences(of: key)
                    // A head goes for real from half the documents; every document is read as if it had one.
                    if settled.contains(key) { _ = try engine.repository.deleteReference(heads[1].name, expecting: heads[1].target) }
                    return (key, try engine.documentVersions(of: key, amongCandidates: [heads[0].target]))
                })
        }
        let read = try test.store.withEngine { $0.updateConflictMarkers(of: keys, startingFrom: staleReads) }
        #expect(Set(read.keys) == Set(keys))
        let inConflict = Set(keys).subtracting(settled)
        #expect(Set(try Self.markers(in: test)) == Set(inConflict.map(ConflictMarkers.marker(of:))))
        #expect(Set(try test.store.documentsInConflict().map(\.key)) == inConflict)
        for key in inConflict { #expect(read[key]?.allHeads.count == 2, "\(key.rawValue) kept its stale read") }
    }
}
