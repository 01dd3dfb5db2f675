import Foundation

/// The answers people gave, recorded and replayed: git's rerere, shared with every replica by sync.
extension DocumentStore {
    /// The resolver name a resolution by recorded answers records in `Resolved-By:`.
    public static let recordedAnswerResolverName = ResolverNames.recordedAnswer

    /// Every recorded answer the store holds, oldest first.
    public func recordedAnswers() throws(TruceError) -> [RecordedAnswer] {
        try answerBook().all()
    }

    /// The recorded answers that apply to `key`'s conflict as it stands: one for the whole document, or one per point;
    /// none when the document is not in conflict.
    public func recordedAnswers(for key: DocumentKey) async throws(TruceError) -> [RecordedAnswer] {
        try await answerBook().applying(to: key)
    }

    /// Forgets the recorded answers that apply to `key`'s conflict (git's `rerere forget`); returns their ids.
    @discardableResult
    public func forgetRecordedAnswers(for key: DocumentKey, device: String? = nil) async throws(TruceError) -> [String] {
        try await answerBook().forget(answersTo: key, device: author(device))
    }

    /// Forgets the recorded answer `id` (or the one whose id starts with it, at least 4 digits): its document is
    /// deleted, on every replica after sync.
    public func forgetRecordedAnswer(_ id: String, device: String? = nil) throws(TruceError) {
        try answerBook().forget(id, device: author(device))
    }

    /// Forgets the recorded answers older than the store's limits, as `git rerere gc` does: `gc.rerereResolved` days
    /// for answers (default 60), `gc.rerereUnresolved` days for records without one (default 15); returns their ids.
    @discardableResult
    public func collectRecordedAnswers(now: Date = Date(), device: String? = nil) throws(TruceError) -> [String] {
        try answerBook().collect(now: now, device: author(device))
    }

    /// The recorded answers' use case, over the store's resolvers.
    func answerBook() -> RecordedAnswerBook { RecordedAnswerBook(access: access, resolving: resolving()) }
}
