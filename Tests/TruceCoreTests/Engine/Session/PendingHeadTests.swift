import Testing

@testable import TruceCore

/// A batch holds one pending head per document it saves: what a single save knows of its document is held by
/// reference, so that a batch's pending heads cost what their names do.
@Suite struct PendingHeadTests {
    @Test func aPendingHeadHoldsWhatASingleSaveKnowsByReference() {
        // Key, version, the versions it replaces, message, the optional listing and the reference: under 128 bytes.
        // Inline, the single save's document, listing and version made it several hundred.
        #expect(MemoryLayout<PendingHead>.stride <= 128, "a pending head takes \(MemoryLayout<PendingHead>.stride) bytes")
    }
}
