import Foundation
import Synchronization
internal import TruceGit

/// The one place Truce runs work that blocks: libgit2 on the disk and the network, a repack, a resolver's
/// deadline, the save log's checkpoint timer, the store watcher's wait.
///
/// Never Swift's cooperative pool, which has one thread per core: a
/// blocked neighbour there would hold a resolver's start, its deadline and
/// an external driver's kill past any timeout. The executor keeps threads of
/// its own, each with a stack libgit2 under Swift frames is comfortable in
/// (a secondary thread's default is 512 KiB on Darwin), and starts another
/// whenever every thread is busy, so blocked work never delays other work.
/// A thread idle for a few seconds ends.
///
/// Async calls of the store reach it through `run(_:)`; resolver code
/// prefers it as its task executor (`withTaskExecutorPreference`).
final class BlockingExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: `state` is only touched with `condition` locked.
    static let shared = BlockingExecutor()

    private enum Work {
        case job(UnownedJob)
        case closure(@Sendable () -> Void)
    }

    private struct State {
        var queue: [Work] = []
        var idle = 0
        var threads = 0
    }

    private let condition = NSCondition()
    private var state = State()
    private static let idleLifetime: TimeInterval = 5
    private static let stackSize = 8 << 20

    func enqueue(_ job: consuming ExecutorJob) {
        submit(.job(UnownedJob(job)))
    }

    /// Runs `work` on one of the executor's threads.
    func execute(_ work: @escaping @Sendable () -> Void) {
        submit(.closure(work))
    }

    private func submit(_ work: Work) {
        condition.lock()
        state.queue.append(work)
        let startsThread = state.idle == 0
        if startsThread { state.threads += 1 } else { condition.signal() }
        condition.unlock()
        if startsThread { startThread() }
    }

    private func startThread() {
        let thread = Thread { [self] in workLoop() }
        thread.stackSize = Self.stackSize
        thread.name = "truce blocking work"
        thread.start()
    }

    private func workLoop() {
        condition.lock()
        while true {
            if let work = state.queue.first {
                state.queue.removeFirst()
                condition.unlock()
                switch work {
                case .job(let job): job.runSynchronously(on: asUnownedTaskExecutor())
                case .closure(let closure): closure()
                }
                condition.lock()
                continue
            }
            state.idle += 1
            let woken = condition.wait(until: Date().addingTimeInterval(Self.idleLifetime))
            state.idle -= 1
            if !woken && state.queue.isEmpty {
                state.threads -= 1
                condition.unlock()
                return
            }
        }
    }

    /// Runs `work` on the executor and hands it a `Cancellation` that is set when the calling task is cancelled.
    ///
    /// A task cancelled before the work starts throws `TruceError.cancelled` without running it.
    static func run<Value: Sendable>(
        _ work: @escaping @Sendable (Cancellation) throws(TruceError) -> Value
    ) async throws(TruceError) -> Value {
        let cancellation = Cancellation()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, TruceError>, Never>) in
                shared.execute {
                    continuation.resume(
                        returning: Result { () throws(TruceError) -> Value in
                            try cancellation.check()
                            return try work(cancellation)
                        })
                }
            }
        } onCancel: {
            cancellation.cancel()
        }
        return try result.get()
    }

    /// Runs async code (the store's reads, a resolver chain) with the executor as its preferred task executor.
    static func preferring<Value>(_ body: () async throws(TruceError) -> Value) async throws(TruceError) -> Value {
        try await withTaskExecutorPreference(shared, operation: body)
    }

    /// Calls `work` on the executor once `delay` has passed; no thread waits meanwhile.
    static func after(_ delay: Duration, _ work: @escaping @Sendable () -> Void) {
        Task(executorPreference: shared) {
            try? await Task.sleep(for: delay)
            work()
        }
    }
}

extension Cancellation {
    /// Throws `TruceError.cancelled` once the flag is set: called only where stopping leaves the store whole.
    func check() throws(TruceError) {
        if isCancelled { throw .cancelled }
    }
}
