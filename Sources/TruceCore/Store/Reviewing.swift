import Foundation
internal import TruceGit

/// Reviewing what automatic resolutions dropped, and bringing a dropped value back.
extension DocumentStore {
    /// The automatic resolutions after `token` (of `key`, by `resolver`, when given), oldest first, with what each
    /// kept and dropped, and the token to ask from next time.
    ///
    /// Reads the change journal from its newest entry back to `token`, as
    /// `changes(since:)` does, so the cost follows the changes since the token,
    /// not the store; resolutions a sync brought are listed like this store's
    /// own. A person's resolutions are not listed. A resolution's decisions
    /// are read from its commit and checked against the heads it settled: a
    /// replica that wrote them malformed gets a ``ReviewedResolution/problem``,
    /// never a value to restore. Each dropped value says whether a later
    /// version restored it (``DroppedValue/restoredBy``).
    public func review(_ key: DocumentKey? = nil, since token: ChangeHistory.Token = .beginning, resolver: String? = nil) throws(TruceError)
        -> ResolutionReview
    {
        try withEngine { engine in
            guard let tip = try engine.repository.reference(ChangeJournal.reference) else {
                guard token == .beginning else { throw TruceError.invalidToken(token.description, reason: "this store has no changes yet") }
                return ResolutionReview(resolutions: [], token: .beginning)
            }
            guard let resolutions = try engine.review(key: key, resolver: resolver, from: tip, after: token.entry) else {
                throw TruceError.invalidToken(token.description, reason: "it is not a position in this store's change history")
            }
            return ResolutionReview(resolutions: resolutions, token: ChangeHistory.Token(entry: tip))
        }
    }

    /// Brings `dropped` back as a new version of its document, based on the current version; nil when the current
    /// version already holds it (nothing is written).
    ///
    /// The value is checked against the resolution's commit, not taken from
    /// `dropped`: the resolution must have recorded dropping that head's value
    /// at that place. A value of the whole document comes back as the dropped
    /// head's content (a dropped deletion deletes the document again). A value
    /// at a place is put back by the resolver that dropped it, which must be a
    /// ``RestoringResolver`` in the store's resolvers (or `registry`), run
    /// under its timeout with its options from config; its output passes the
    /// same validation as a resolution's. The new version is a save by
    /// `device`, dated now, whose message names what it restores
    /// (`Restores-Dropped: <resolution> <version> "<place>"`), so every
    /// replica's `review` shows the value restored. When another writer saved
    /// meanwhile, it lands beside that version and the document is in
    /// conflict, as a save does.
    @discardableResult
    public func restore(_ dropped: DroppedValue, registry: ResolverRegistry? = nil, device: String? = nil) async throws(TruceError)
        -> SaveResult?
    {
        let author = try author(device)
        let key = dropped.key
        let (resolution, decision, droppedSide, current) = try withEngine { try $0.restoreInputs(dropped) }
        let content: Data?
        if let point = decision.point {
            content = try await restoring(point, from: droppedSide, into: current, by: resolution, registry: registry ?? resolvers)
        } else {
            content = droppedSide.content
        }
        if content == current.content { return nil }
        let restore = RestoredDrop(resolution: resolution.id, version: droppedSide.version.id, point: decision.point)
        return try transacting(.packed) { transaction in
            try transaction.save(content, to: key, base: current.version.id, author: author, date: Date(), restoring: restore).result
        }
    }

    /// The content `resolution`'s resolver gives for putting back the value `dropped` holds at `point`.
    private func restoring(
        _ point: String, from dropped: ConflictSet.Side, into current: ConflictSet.Side, by resolution: Version, registry: ResolverRegistry
    ) async throws(TruceError) -> Data? {
        let key = current.version.key
        let name = resolution.resolvedBy ?? ""
        let choice: ResolverChoice
        do {
            choice = try resolverChoice(for: key, registry: registry, explicit: name, options: nil)
        } catch .unknownResolver {
            throw .nothingToRestore(
                key, reason: "\(name), which dropped the value at \(TruceError.quoted(point)), is not among this store's resolvers")
        }
        guard let restorer = choice.resolvers[name] as? any RestoringResolver else {
            throw .nothingToRestore(
                key,
                reason: "\(name) cannot put back one value (it is not a RestoringResolver); version \(dropped.version.id.short) holds it whole")
        }
        let options = choice.options[name] ?? ResolverOptions(resolverName: name)
        let tips = [current.version.id]
        let content: Data?
        do {
            content = try await Deadline.running(name, timeout: choice.timeout(of: name)) { [self] deadline in
                let context = resolutionContext(of: key, tips: tips, options: options, deadline: deadline)
                return try await restorer.restoring(point, from: dropped, into: current, context: context)
            }
        } catch {
            if ResolverChain.isStoreProblem(error) { throw error }
            // Not a store that failed: the document no longer has a shape the value fits, or the resolver gave up.
            let reason = if case .resolverFailed(_, let reason) = error { reason } else { error.errorDescription ?? "\(error)" }
            throw .nothingToRestore(key, reason: "\(name) could not put back the value at \(TruceError.quoted(point)): \(reason)")
        }
        if let content, let problem = OutputValidation.problem(with: content, for: key) {
            throw .resolverFailed(name, reason: "putting back \(TruceError.quoted(point)) gave content that is \(problem); nothing was written")
        }
        return content
    }
}
