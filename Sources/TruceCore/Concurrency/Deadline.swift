import Foundation
import Synchronization

/// A value that the first of several racers hands to one waiter; later racers are ignored.
///
/// What lets the store stop waiting for a resolver at its deadline: a task
/// group would wait for a child that ignores cancellation, a continuation
/// resumed by whichever comes first does not.
private final class FirstOf<Value: Sendable>: Sendable {
    private struct State {
        var waiter: CheckedContinuation<Value, Never>?
        var value: Value?
        var isDecided = false
    }

    private let state = Mutex(State())

    /// Hands `value` over unless another racer did first.
    func offer(_ value: Value) {
        let waiter = state.withLock { state -> CheckedContinuation<Value, Never>? in
            guard !state.isDecided else { return nil }
            state.isDecided = true
            guard let waiter = state.waiter else {
                state.value = value
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume(returning: value)
    }

    /// The first value offered, as soon as there is one.
    func value() async -> Value {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Value? in
                if let value = state.value { return value }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}

/// How one run of resolver code ended for the store: with its own answer, at the deadline, or by the caller's cancellation.
private enum ResolverEnding<Value: Sendable>: Sendable {
    case finished(Result<Value, any Error>)
    case timedOut
    case cancelled
}

/// Resolver code run against its deadline: `resolver.<name>.timeout` seconds, then a short grace.
enum Deadline {
    /// How long past its deadline the store waits for a cancelled resolver's answer before it stops waiting.
    ///
    /// Long enough for a resolver that enforces the deadline itself (an
    /// external driver kills its process and passes with its own reason), short
    /// enough that a resolver ignoring cancellation cannot hold `resolve`.
    static let resolverGrace: Duration = .seconds(1)

    /// Runs resolver code with a deadline: a TruceError it throws stays as it is, any other error means the resolver
    /// failed, and so does not finishing in time.
    ///
    /// At the deadline the resolver's task is cancelled; what it returns
    /// within `resolverGrace` after that still counts, a throw then is the
    /// timeout. After the grace the store stops waiting, whether or not the
    /// task has ended. A cancelled caller stops waiting at once, with `TruceError.cancelled`.
    static func running<Value: Sendable>(
        _ name: String, timeout: Double, _ body: @escaping @Sendable (ContinuousClock.Instant) async throws -> Value
    ) async throws(TruceError) -> Value {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(timeout)
        let ending = FirstOf<ResolverEnding<Value>>()
        // Unstructured on purpose: a child task would have to end before this function could return.
        let work = Task(executorPreference: BlockingExecutor.shared) {
            do { ending.offer(.finished(.success(try await body(deadline)))) } catch { ending.offer(.finished(.failure(error))) }
        }
        let timer = Task(executorPreference: BlockingExecutor.shared) {
            do {
                try await Task.sleep(until: deadline, clock: clock)
                work.cancel()
                try await Task.sleep(until: deadline + resolverGrace, clock: clock)
                ending.offer(.timedOut)
            } catch {
                // Cancelled: the work ended first.
            }
        }
        let end = await withTaskCancellationHandler {
            await ending.value()
        } onCancel: {
            work.cancel()
            ending.offer(.cancelled)
        }
        timer.cancel()
        let timedOut = TruceError.resolverFailed(name, reason: "it did not finish within \(seconds(timeout))")
        switch end {
        case .finished(.success(let value)):
            return value
        case .finished(.failure(let error)):
            if Task.isCancelled { throw .cancelled }
            // The cancellation the deadline caused, as the resolver passed it on: the timeout, not an error of its own.
            if error is CancellationError && clock.now >= deadline { throw timedOut }
            if let error = error as? TruceError { throw error }
            throw .resolverFailed(name, reason: "\(error)")
        case .timedOut:
            throw timedOut
        case .cancelled:
            throw .cancelled
        }
    }

    /// `3 s`, `0.5 s`: a timeout as config wrote it.
    static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }
}
