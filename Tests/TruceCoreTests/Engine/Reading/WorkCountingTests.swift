import Foundation
import TestSupport
import Testing

@testable import TruceCore

/// Reading one document's heads must not read every reference of the store.
@Suite(.timeLimit(.minutes(10))) struct WorkCountingTests {
    @Test func versionsOfOneDocumentListOnlyItsOwnReferences() throws {
        let small = try TestStore()
        let large = try TestStore()
        for index in 0..<3 { try small.store.save(.text("\(index)\n"), to: DocumentKey("docs/\(index).txt"), device: "laptop") }
        for index in 0..<300 { try large.store.save(.text("\(index)\n"), to: DocumentKey("docs/\(index).txt"), device: "laptop") }

        for test in [small, large] {
            let reopened = try DocumentStore.open(at: test.path)
            let before = reopened.instrumentation.referencesListed
            _ = try reopened.versions(of: "docs/1.txt")
            #expect(reopened.instrumentation.referencesListed - before == 1)
        }
        // Listing the whole store does read them all, which is what the counter measures.
        let reopened = try DocumentStore.open(at: large.path)
        _ = try reopened.documents()
        #expect(reopened.instrumentation.referencesListed == 300)
    }

    @Test func statusListsOnlyTheConflictMarkers() throws {
        let test = try TestStore()
        for index in 0..<60 { try test.store.save(.text("\(index)\n"), to: DocumentKey("docs/\(index).txt"), device: "laptop") }
        try test.makeConflict("a.txt", base: .text("0\n"), heads: [("laptop", .text("1\n")), ("phone", .text("2\n"))])
        try test.makeConflict("b.txt", base: .text("0\n"), heads: [("laptop", .text("1\n")), ("phone", .text("2\n"))])
        let reopened = try DocumentStore.open(at: test.path)
        let before = reopened.instrumentation.referencesListed
        #expect(try reopened.documentsInConflict().map(\.key) == ["a.txt", "b.txt"])
        // Two markers, then the two heads of each marked document.
        #expect(reopened.instrumentation.referencesListed - before == 2 + 4)
    }

    @Test func aMissingOrStaleMarkerIsIgnoredByStatusAndRepairedByPrune() throws {
        let test = try TestStore()
        try test.makeConflict("a.txt", base: .text("0\n"), heads: [("laptop", .text("1\n")), ("phone", .text("2\n"))])
        let settled = try test.store.save(.text("x\n"), to: "b.txt", device: "laptop")
        // As if a crash lost a.txt's marker and left one for b.txt, which is not in conflict.
        _ = try test.git("update-ref", "-d", ConflictMarkers.marker(of: "a.txt"))
        _ = try test.git("update-ref", ConflictMarkers.marker(of: "b.txt"), settled.id.hex)
        #expect(try test.store.documentsInConflict().isEmpty)
        try test.store.prune()
        #expect(try test.store.documentsInConflict().map(\.key) == ["a.txt"])
        #expect(try test.git("for-each-ref", "--format=%(refname)", ConflictMarkers.root) == ConflictMarkers.marker(of: "a.txt") + "\n")
    }
}
