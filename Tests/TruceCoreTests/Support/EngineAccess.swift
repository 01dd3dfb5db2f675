@testable import TruceCore

extension DocumentStore {
    /// The store's engine, for tests that look under the facade: what the save log holds lands first, as a writer
    /// would land it, so that the engine reads git alone.
    func withEngine<Result: Sendable>(_ body: (StoreEngine) throws -> Result) throws -> Result {
        try checkpoint()
        return try access.read { try body($0.engine) }
    }
}
