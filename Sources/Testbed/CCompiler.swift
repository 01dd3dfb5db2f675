import Foundation

/// The machine's C compiler, for the tests that build a small C library or program of their own from source (the crash
/// tracer, the allocator probe).
public enum CCompiler {
    /// `cc`, else a `clang` (the toolchain's sits next to swift, on the `PATH`); nil when the machine has neither.
    public static let path: String? = {
        let candidates =
            ["/usr/bin/cc", "/usr/bin/clang"]
            + ProcessInfo.processInfo.environment["PATH", default: ""].split(separator: ":").map { "\($0)/clang" }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()
}
