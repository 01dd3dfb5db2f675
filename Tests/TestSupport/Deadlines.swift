import Dispatch
import Synchronization

/// The first `count` elements of `sequence` that satisfy `isWanted`, waiting at most `limit` for them.
///
/// Throws `DeadlinePassed`, naming `what` and the elements seen so far, when the
/// deadline passes or the sequence ends first, so a missing event fails the
/// test with a message instead of hanging the suite. The deadline holds even
/// for a sequence that ignores cancellation: its iteration is abandoned, not awaited.
public func firstElements<S: AsyncSequence & Sendable>(
    _ count: Int, of sequence: S, where isWanted: @escaping @Sendable (S.Element) -> Bool = { _ in true },
    within limit: Duration = .seconds(5), waitingFor what: String
) async throws -> [S.Element] where S.Element: Sendable {
    let wait = BoundedWait<S.Element>(count: count)
    var tasks: [Task<Void, Never>] = []
    let (elements, ending) = await withCheckedContinuation { continuation in
        wait.start(continuation)
        tasks.append(
            Task {
                do {
                    for try await element in sequence where isWanted(element) {
                        if wait.add(element) { return }
                    }
                    wait.end("the sequence ended")
                } catch {
                    wait.end("the sequence failed (\(error))")
                }
            })
        tasks.append(
            Task {
                try? await Task.sleep(for: limit)
                wait.end("the deadline of \(limit) passed")
            })
    }
    for task in tasks { task.cancel() }
    guard let ending else { return elements }
    throw DeadlinePassed(description: "\(ending) while waiting for \(what): \(elements.count) of \(count) came: \(elements)")
}

/// What one `firstElements(_:of:)` call shares between its collecting task and its timer: whichever ends the wait first wins.
private final class BoundedWait<Element: Sendable>: Sendable {
    private struct State {
        var elements: [Element] = []
        var continuation: CheckedContinuation<([Element], String?), Never>?
    }

    private let count: Int
    private let state = Mutex(State())

    init(count: Int) { self.count = count }

    func start(_ continuation: CheckedContinuation<([Element], String?), Never>) {
        state.withLock { $0.continuation = continuation }
    }

    /// Adds `element`; true when the wait is over, with it or before it.
    func add(_ element: Element) -> Bool {
        let (continuation, elements) = state.withLock { state -> (CheckedContinuation<([Element], String?), Never>?, [Element]) in
            guard state.continuation != nil else { return (nil, []) }
            state.elements.append(element)
            guard state.elements.count >= count else { return (nil, []) }
            defer { state.continuation = nil }
            return (state.continuation, state.elements)
        }
        continuation?.resume(returning: (elements, nil))
        return state.withLock { $0.continuation == nil }
    }

    /// Ends the wait, unless it is already over, with `reason` as the failure.
    func end(_ reason: String) {
        let (continuation, elements) = state.withLock { state in
            defer { state.continuation = nil }
            return (state.continuation, state.elements)
        }
        continuation?.resume(returning: (elements, reason))
    }
}

/// Seconds `body` takes, measured on Dispatch's threads rather than Swift's cooperative pool.
///
/// The suite's synchronous tests block the pool's few threads (one per core), so an async test resumed there can wait
/// minutes for a thread: a bound on how long a call takes is measured where no neighbour delays the measuring.
public func secondsOffThePool(_ body: () async throws -> Void) async rethrows -> Double {
    try await withTaskExecutorPreference(DispatchExecutor.shared) {
        let clock = ContinuousClock()
        let start = clock.now
        try await body()
        let elapsed = clock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
}

/// A task executor on a concurrent Dispatch queue, whose threads grow when some block.
private final class DispatchExecutor: TaskExecutor {
    static let shared = DispatchExecutor()
    private let queue = DispatchQueue(label: "test measurements", attributes: .concurrent)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
