import Foundation
import TestSupport
import Testing

/// The test support's child processes: each run gives back every descriptor it opened.
///
/// Foundation's `Process.run` on Linux reads `/proc/self/fd` with a copy that
/// can overrun glibc's buffer (swift-corelibs-foundation #5472), more likely
/// the more descriptors are open, so a run that kept its pipes open (a
/// watchdog holding the process for ten minutes did) made the suite crash
/// now and then.
@Suite(.timeLimit(.minutes(10))) struct ChildProcessTests {
    static func openDescriptors() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0 }

    @Test func runsLeaveNoDescriptorOpen() throws {
        _ = try run("/bin/true", [])
        let before = Self.openDescriptors()
        for _ in 0..<40 { _ = try run("/bin/echo", ["x"]) }
        // Other tests of the process open and close descriptors meanwhile: only a leak of one a run shows as growth.
        #expect(Self.openDescriptors() - before < 40, "\(Self.openDescriptors() - before) more descriptors after 40 runs")
    }
}
