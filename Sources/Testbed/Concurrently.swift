import Foundation
import Synchronization

/// Runs `body` for every index, at most `width` at a time, and returns the results in index order.
public func concurrently<T: Sendable>(
    _ indices: Range<Int>, width: Int,
    _ body: @escaping @Sendable (Int) async throws -> T
) async throws -> [T] {
    try await withThrowingTaskGroup(of: (Int, T).self) { group in
        var results = [T?](repeating: nil, count: indices.count)
        var next = indices.lowerBound
        func start() {
            guard next < indices.upperBound else { return }
            let index = next
            group.addTask { (index, try await body(index)) }
            next += 1
        }
        for _ in 0..<width { start() }
        while let (index, result) = try await group.next() {
            results[index - indices.lowerBound] = result
            start()
        }
        return results.map { $0! }
    }
}

/// Runs `body(index)` for every index of `0..<count` on `workers` threads at once, then throws the error of the lowest
/// index that failed: a failure is never dropped. Once one has failed, no further index starts.
public func concurrentlyPerform(_ count: Int, workers: Int, _ body: @Sendable (Int) throws -> Void) throws {
    let state = ConcurrentLoop()
    DispatchQueue.concurrentPerform(iterations: max(1, workers)) { _ in
        while let index = state.next(below: count) {
            do { try body(index) } catch { state.fail(at: index, error) }
        }
    }
    if let error = state.firstFailure { throw error }
}

/// The shared state of `concurrentlyPerform`: the next index to hand out, and the failure of the lowest index.
private final class ConcurrentLoop: @unchecked Sendable {
    private let lock = NSLock()
    private var nextIndex = 0
    private var failure: (index: Int, error: any Error)?

    func next(below count: Int) -> Int? {
        lock.withLock {
            guard failure == nil, nextIndex < count else { return nil }
            defer { nextIndex += 1 }
            return nextIndex
        }
    }

    func fail(at index: Int, _ error: any Error) {
        lock.withLock { if failure.map({ index < $0.index }) ?? true { failure = (index, error) } }
    }

    var firstFailure: (any Error)? { lock.withLock { failure?.error } }
}
