import Foundation
import Synchronization

/// What a resolver gets besides the conflict: its options, the document's history and the deadline the store gives
/// it; and where it reports what it kept and dropped.
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
    /// The merge rules of the document's JSON fields (its `info/fields` and `.truce/fields` lines): a resolver that
    /// merges by structure follows them.
    public var fieldRules: [FieldRule] = []
    /// What must hold of the merged document's fields; a resolver that merges by structure sends a merge that breaks
    /// one to a person.
    public var fieldInvariants: [FieldInvariant] = []
    /// While a ``RestoringResolver`` puts a dropped value back: the resolution that dropped it (its version and
    /// content), whose document the decision's point names a place in; nil otherwise.
    public internal(set) var droppingResolution: ConflictSet.Side?
    private let readHistory: @Sendable (Int) async throws(TruceError) -> [Version]
    private let readContent: @Sendable (Version) async throws(TruceError) -> Data?
    private let decisions = DecisionLog()

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

    /// Reports what the resolver kept and replaced at one place; the resolution commit records it if the resolver settles.
    ///
    /// Record while deciding, before returning `.resolved` or `.kept`. What
    /// a resolver records and then passes, throws or times out with is
    /// thrown away, and so is anything recorded after it returned. The store
    /// writes the decisions sorted by place (whole-document decisions
    /// first), so the order they are recorded in does not change the commit,
    /// and leaves out values from versions that are not heads of the conflict,
    /// and a decision left dropping nothing by that. A decision recorded with
    /// no dropped values is written as it is: a rule that kept every head's
    /// change (a count, a set) says so. Recording nothing is fine:
    /// a resolver that keeps one head (`.kept`) and records nothing gets the
    /// whole-document decision written for it.
    public func record(_ decision: ResolutionDecision) {
        decisions.append(decision)
    }

    /// The decisions recorded so far, in the order they were recorded: for a resolver's tests.
    public var recordedDecisions: [ResolutionDecision] { decisions.current }

    /// The decisions recorded until now; later ones are ignored, so a task the resolver left running cannot change a
    /// resolution already decided.
    func closeDecisions() -> [ResolutionDecision] { decisions.close() }
}

/// The decisions one resolver run records, until the store takes them.
private final class DecisionLog: Sendable {
    private let state = Mutex<(decisions: [ResolutionDecision], isClosed: Bool)>(([], false))

    func append(_ decision: ResolutionDecision) {
        state.withLock { state in
            if !state.isClosed { state.decisions.append(decision) }
        }
    }

    var current: [ResolutionDecision] { state.withLock { $0.decisions } }

    func close() -> [ResolutionDecision] {
        state.withLock { state in
            state.isClosed = true
            return state.decisions
        }
    }
}
