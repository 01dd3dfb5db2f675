import Foundation
import TestSupport
import Testing

@testable import TruceCore

/// Resolving many documents reads each once: its conflict and its routing in one session; the recorded answers of ids
/// not looked up before in the call in another; the store's part of the routing once; and all the resolutions written
/// in one.
@Suite(.timeLimit(.minutes(10))) struct ResolvingTests {
    @Test func resolveAllOpensOneSessionPerDocumentOneForTheirSharedAnswerIDsAndOneToWrite() async throws {
        let test = try TestStore()
        let keys: [DocumentKey] = (0..<6).map { DocumentKey(stringLiteral: "notes/\($0).md") }
        for key in keys {
            try test.makeConflict(key, base: .text("a\nb\nc\n"), heads: [("laptop", .text("A\nb\nc\n")), ("phone", .text("a\nb\nC\n"))])
        }
        let store = try DocumentStore.open(at: test.path, resolvers: test.store.resolvers, instrumentation: StoreInstrumentation())
        let (before, listingsBefore) = (store.instrumentation.sessionsOpened, store.instrumentation.documentHeadListings)
        let results = try await store.resolveAll(device: "laptop")
        let sessions = store.instrumentation.sessionsOpened - before
        let listings = store.instrumentation.documentHeadListings - listingsBefore
        #expect(results.count == keys.count && results.values.allSatisfy { if case .resolved = $0 { true } else { false } })
        // One to find the marked documents and read the store's routing, one per document (its conflict and routing), one for the recorded answers of
        // the ids the six conflicts share (the same disagreement), one write.
        #expect(sessions == 1 + keys.count + 1 + 1, "resolveAll of \(keys.count) documents opened \(sessions) sessions")
        // The store's routing documents (attributes, config, fields) read once for the call, not once per document:
        // each document's own heads are listed a few times (marked, read, written, its marker), 28 in all here.
        #expect(listings <= 3 + 5 * keys.count, "resolveAll of \(keys.count) documents listed heads \(listings) times")
        #expect(try store.documentsInConflict().isEmpty)
    }
}
