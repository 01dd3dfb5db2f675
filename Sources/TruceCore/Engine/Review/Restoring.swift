import Foundation

/// Bringing back a value an automatic resolution dropped, as a new version of its document.
///
/// The value is checked against the resolution's own commit, never taken
/// from the caller: the resolution must have recorded dropping that head's
/// value at that place. A value of the whole document comes back as the
/// dropped head's content; a value at a place is put back by the resolver
/// that dropped it, which must be a ``RestoringResolver``, run under its
/// timeout with its options, its output validated as a resolution's is.
struct Restoring: Sendable {
    let resolving: Resolving

    /// Brings `dropped` back as a save by `author` based on the current version; nil when the current version
    /// already holds it (nothing is written).
    func restore(_ dropped: DroppedValue, author: String) async throws(TruceError) -> SaveResult? {
        let access = resolving.access
        let (resolution, decision, droppedSide, current) = try access.read { try $0.restoreInputs(dropped) }
        let content: Data?
        if let point = decision.point {
            content = try await restoring(point, from: droppedSide, into: current, by: resolution)
        } else {
            content = droppedSide.content
        }
        if content == current.content { return nil }
        let restore = RestoredDrop(resolution: resolution.version.id, version: droppedSide.version.id, point: decision.point)
        return try access.save(content, to: dropped.key, base: current.version.id, author: author, date: Date(), restoring: restore)
    }

    /// The content `resolution`'s resolver gives for putting back the value `dropped` holds at `point`.
    private func restoring(
        _ point: String, from dropped: ConflictSet.Side, into current: ConflictSet.Side, by resolution: ConflictSet.Side
    ) async throws(TruceError) -> Data? {
        let key = current.version.key
        let name = resolution.version.resolvedBy ?? ""
        let choice: ResolverChoice
        do {
            choice = try resolving.resolverChoice(for: key, explicit: name)
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
            content = try await Deadline.running(name, timeout: choice.timeout(of: name)) { [resolving] deadline in
                var context = resolving.resolutionContext(of: key, tips: tips, options: options, deadline: deadline)
                (context.fieldRules, context.fieldInvariants) = (choice.fieldRules, choice.fieldInvariants)
                context.droppingResolution = resolution
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
