import Foundation

/// SplitMix64: small, seeded and the same on every machine, unlike the system generator.
public struct SeededRandom: Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    public mutating func int(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.count))
    }

    public mutating func chance(_ percent: Int) -> Bool { int(0...99) < percent }

    public mutating func pick<T>(_ items: [T]) -> T { items[int(0...items.count - 1)] }

    /// A fraction in [0, 1).
    public mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}

/// 20-byte object ids with every byte value in every position: random ones, and the all-zero, all-0xff and one-bit ones.
public func objectIDByteSamples() -> [[UInt8]] {
    var random = SeededRandom(seed: 0x1D)
    var samples = (0..<200).map { _ in (0..<20).map { _ in UInt8(truncatingIfNeeded: random.next()) } }
    samples += [[UInt8](repeating: 0, count: 20), [UInt8](repeating: 0xFF, count: 20)]
    samples += (0..<160).map { bit in (0..<20).map { $0 == bit / 8 ? UInt8(0x80) >> UInt8(bit % 8) : 0 } }
    return samples
}

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
