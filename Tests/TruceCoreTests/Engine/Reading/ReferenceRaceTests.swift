import Foundation
import Synchronization
import TestSupport
import Testing

@testable import TruceCore
@testable import TruceGit

/// A reader listing a document's heads while a save replaces one (the new head written, then the old one deleted)
/// sees the new head, never none.
@Suite(.timeLimit(.minutes(10))) struct ReferenceRaceTests {
    @Test func aHeadReplacedBetweenListingAndReadingIsReadAgainNotLost() throws {
        let test = try TestStore()
        let first = try test.store.save(.text("one\n"), to: "notes/a.md", device: "laptop")
        let second = try test.store.saveBatch([BatchSave(key: "notes/b.md", content: .text("other\n"), device: "laptop")])[0]
        let key: DocumentKey = "notes/a.md"
        let directory = ReferenceLayout.headsDirectory(of: key)
        let heads = try test.store.withEngine { engine -> [(name: String, target: ObjectID)] in
            let reader = engine.repository
            nonisolated(unsafe) let writer = try Repository.openBare(at: test.path)
            let played = Mutex(false)
            test.store.instrumentation.afterListingLooseReferences {
                guard !played.withLock({ $0 }) else { return }
                played.withLock { $0 = true }
                // What a save does: the new head first, then the one it replaces goes.
                let replacement = ReferenceLayout.headReference(of: key, version: second)
                do {
                    try writer.updateReference(replacement, to: second.objectID, expecting: nil, message: "test: replacing head")
                    _ = try writer.deleteReference(ReferenceLayout.headReference(of: key, version: first.id), expecting: first.id.objectID)
                } catch {
                    Issue.record("the racing writer failed, so nothing raced: \(error)")
                }
            }
            defer { test.store.instrumentation.afterListingLooseReferences(nil) }
            let found = try reader.references(under: directory)
            #expect(played.withLock { $0 }, "the writer never ran between the listing and the reads")
            return found
        }
        #expect(heads.map(\.target) == [second.objectID], "\(heads)")
    }
}
