import Foundation

/// What a resolver gets besides the conflict: its options, the document's history and the deadline the store gives it.
///
/// The store builds one for each resolver of a chain it runs. A test builds
/// one with `init(options:deadline:history:content:)`, or from a
/// `ConflictFixture` (TruceTesting), so a resolver is tested without a store.
public struct ResolutionContext: Sendable {
    /// The resolver's `resolver.<name>.<option>` lines of config (or the options a call gave), with typed readers.
    public let options: ResolverOptions
    /// When the store stops waiting: at this instant it cancels the resolver's task and counts it as failed.
    ///
    /// A resolver that waits on something outside Swift (a process, a
    /// socket) should stop it by then; cooperative work (`Task.sleep`,
    /// `Task.checkCancellation()`) is cancelled for it.
    public let deadline: ContinuousClock.Instant
    private let readHistory: @Sendable (Int) async throws(TruceError) -> [Version]
    private let readContent: @Sendable (Version) async throws(TruceError) -> Data?

    /// A context over any history: `history` gives at most that many versions, newest first; `content` one version's bytes.
    public init(
        options: ResolverOptions, deadline: ContinuousClock.Instant,
        history: @escaping @Sendable (_ limit: Int) async throws(TruceError) -> [Version],
        content: @escaping @Sendable (Version) async throws(TruceError) -> Data?
    ) {
        self.options = options
        self.deadline = deadline
        self.readHistory = history
        self.readContent = content
    }

    /// The document's versions the conflict's heads reach, newest first (the heads among them), at most `limit`.
    ///
    /// Read from the store when asked, so a resolver that needs no history pays nothing for it.
    public func history(limit: Int = 20) async throws(TruceError) -> [Version] {
        guard limit > 0 else { return [] }
        return try await readHistory(limit)
    }

    /// The bytes of one version of the document (nil for a deletion), such as one `history(limit:)` gave.
    public func content(of version: Version) async throws(TruceError) -> Data? {
        try await readContent(version)
    }
}
