import Foundation

/// A person resolving: a session an app's UI drives, committed as the same answers through `resolve(_:answering:)`
/// would be, or parked to go on later, here or on another device.
extension DocumentStore {
    /// A session in which a person settles `key`'s conflict, continuing the one parked for it, if any.
    ///
    /// The points are those `conflictPoints(for:)` lists: line hunks, or the
    /// places a structured resolver names. A parked session's answers come
    /// back matched to the points by content; when new versions arrived since
    /// it was parked, `resumption` says so and what was kept. A document that
    /// is not in conflict is `TruceError.notInConflict`.
    public func resolutionSession(for key: DocumentKey, registry: ResolverRegistry? = nil) async throws(TruceError) -> ResolutionSession {
        try await PersonResolving(resolving: resolving(registry)).session(for: key)
    }

    /// Writes the resolution the session's answers make: exactly the commit `resolve(_:answering:)` writes for them,
    /// after output validation; then forgets the parked session, if any.
    ///
    /// A session with points still open, or whose document got new versions
    /// since it began, is `TruceError.invalidAnswer` and writes nothing:
    /// start it again (`resolutionSession(for:)` keeps the answers whose
    /// points remain).
    @discardableResult
    public func commit(_ session: ResolutionSession, device: String? = nil) async throws(TruceError) -> ResolveResult {
        try await PersonResolving(resolving: resolving()).commit(session, device: author(device))
    }

    /// Puts the session aside with the answers given so far: they are saved as the document
    /// `.truce/sessions/<key hash>.json`, which syncs like any other, and `resolutionSession(for:)` continues from them,
    /// on this device or another. Returns the version written.
    @discardableResult
    public func park(_ session: ResolutionSession, device: String? = nil, date: Date = Date()) throws(TruceError) -> Version {
        try PersonResolving(resolving: resolving()).park(session, device: author(device), date: date)
    }

    /// Forgets the session parked for `key`, if any (its document is deleted; history keeps it).
    public func discardParkedSession(for key: DocumentKey, device: String? = nil) throws(TruceError) {
        try PersonResolving(resolving: resolving()).discardParkedSession(for: key, device: author(device))
    }
}
