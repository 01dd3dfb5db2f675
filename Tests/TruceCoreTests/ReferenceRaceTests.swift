import Foundation
import TestSupport
import Testing

@testable import TruceCore
@testable import TruceGit

/// A reader listing a document's heads while a save replaces one (the new head written, then the old one deleted)
/// sees the new head, never none.
struct ReferenceRaceTests {
    @Test func aHeadReplacedBetweenListingAndReadingIsReadAgainNotLost() throws {
        let test = try TestStore()
        let first = try test.store.save(.text("one\n"), to: "notes/a.md", device: "laptop")
        let second = try test.store.saveBatch([BatchSave(key: "notes/b.md", content: .text("other\n"), device: "laptop")])[0]
        let key: DocumentKey = "notes/a.md"
        let directory = ReferenceLayout.headsDirectory(of: key)
        let heads = try test.store.withRepository { reader -> [(name: String, target: ObjectID)] in
            let writer = try Repository.openBare(at: test.path)
            var played = false
            reader.afterListingLooseReferences = {
                guard !played else { return }
                played = true
                // What a save does: the new head first, then the one it replaces goes.
                let replacement = ReferenceLayout.headReference(of: key, version: second)
                do {
                    try writer.updateReference(replacement, to: second.objectID, expecting: nil, message: "test: replacing head")
                    _ = try writer.deleteReference(ReferenceLayout.headReference(of: key, version: first.id), expecting: first.id.objectID)
                } catch {
                    Issue.record("the racing writer failed, so nothing raced: \(error)")
                }
            }
            defer { reader.afterListingLooseReferences = nil }
            let found = try reader.references(under: directory)
            #expect(played, "the writer never ran between the listing and the reads")
            return found
        }
        #expect(heads.map(\.target) == [second.objectID], "\(heads)")
    }
}
