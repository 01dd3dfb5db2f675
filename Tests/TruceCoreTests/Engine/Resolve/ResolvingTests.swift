import Foundation
import TestSupport
import Testing

@testable import TruceCore

/// Resolving many documents reads each once: its conflict and its routing in one session; the recorded answers of ids
/// not looked up before in the call in another; and all the resolutions written in one.
@Suite(.timeLimit(.minutes(10))) struct ResolvingTests {
    @Test func resolveAllOpensOneSessionPerDocumentOneForTheirSharedAnswerIDsAndOneToWrite() async throws {
        let test = try TestStore()
        let keys: [DocumentKey] = (0..<6).map { DocumentKey(stringLiteral: "notes/\($0).md") }
        for key in keys {
            try test.makeConflict(key, base: .text("a\nb\nc\n"), heads: [("laptop", .text("A\nb\nc\n")), ("phone", .text("a\nb\nC\n"))])
        }
        let store = try DocumentStore.open(at: test.path, resolvers: test.store.resolvers, instrumentation: StoreInstrumentation())
        let before = store.instrumentation.sessionsOpened
        let results = try await store.resolveAll(device: "laptop")
        let sessions = store.instrumentation.sessionsOpened - before
        #expect(results.count == keys.count && results.values.allSatisfy { if case .resolved = $0 { true } else { false } })
        // One to find the marked documents, one per document (its conflict and routing), one for the recorded answers of
        // the ids the six conflicts share (the same disagreement), one write.
        #expect(sessions == 1 + keys.count + 1 + 1, "resolveAll of \(keys.count) documents opened \(sessions) sessions")
        #expect(try store.documentsInConflict().isEmpty)
    }
}
