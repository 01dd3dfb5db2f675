import Foundation
import Synchronization

/// The payload the save log's crash test child appends as `index` on `thread` in `round`, so the test can recompute
/// what each acknowledged sequence number must hold: a label, then a deterministic run of bytes of varying length.
public func saveLogCrashPayload(round: Int, thread: Int, index: Int) -> [UInt8] {
    let label = Array("round \(round) thread \(thread) index \(index);".utf8)
    let length = (index * 131 + thread * 17 + round) % 3000
    return label + (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ index &+ thread) }
}

/// Runs `append(thread, index)` for every index below `perThread` on each of `threads` real threads at once, and
/// collects the payload each call says it appended under which sequence number, and every problem: an error thrown,
/// or a sequence number returned twice.
public func appendOnThreads(
    _ threads: Int, perThread: Int, _ append: @escaping @Sendable (_ thread: Int, _ index: Int) throws -> (UInt64, [UInt8])
) -> (appended: [UInt64: [UInt8]], problems: [String]) {
    let state = Mutex<(appended: [UInt64: [UInt8]], problems: [String])>(([:], []))
    let done = DispatchGroup()
    for thread in 0..<threads {
        done.enter()
        Thread {
            defer { done.leave() }
            for index in 0..<perThread {
                do {
                    let (sequence, payload) = try append(thread, index)
                    state.withLock {
                        if $0.appended.updateValue(payload, forKey: sequence) != nil { $0.problems.append("\(sequence) returned twice") }
                    }
                } catch {
                    state.withLock { $0.problems.append("thread \(thread), append \(index): \(error)") }
                }
            }
        }.start()
    }
    done.wait()
    return state.withLock { $0 }
}
