import Foundation
import Testing
import TestSupport
@testable import TruceCore

/// Reading one document's heads must not read every reference of the store.
struct WorkCountingTests {
    @Test func versionsOfOneDocumentListOnlyItsOwnReferences() throws {
        let small = try TestStore()
        let large = try TestStore()
        for index in 0..<3 { try small.store.save(.text("\(index)\n"), to: DocumentKey("docs/\(index).txt"), device: "laptop") }
        for index in 0..<300 { try large.store.save(.text("\(index)\n"), to: DocumentKey("docs/\(index).txt"), device: "laptop") }

        for test in [small, large] {
            let reopened = try DocumentStore.open(at: test.path)
            let before = reopened.referencesListed
            _ = try reopened.versions(of: "docs/1.txt")
            #expect(reopened.referencesListed - before == 1)
        }
        // Listing the whole store does read them all, which is what the counter measures.
        let reopened = try DocumentStore.open(at: large.path)
        _ = try reopened.documents()
        #expect(reopened.referencesListed == 300)
    }
}
