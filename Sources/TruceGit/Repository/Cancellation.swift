import Synchronization

/// A flag the task running a long operation sets when it is cancelled, and the work checks at its safe points.
///
/// Passed down as a parameter (never a global), so that each operation stops
/// only for its own task; the network transfer reads it in libgit2's
/// progress callbacks, which abort the transfer by returning an error.
package final class Cancellation: Sendable {
    private let flag = Atomic<Bool>(false)

    /// A flag not yet set.
    package init() {}

    /// Sets the flag; the work stops at its next safe point.
    package func cancel() { flag.store(true, ordering: .relaxed) }

    /// True once `cancel()` was called.
    package var isCancelled: Bool { flag.load(ordering: .relaxed) }
}
