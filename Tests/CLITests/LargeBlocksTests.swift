import Foundation
import TestSupport
import Testing

@testable import TruceCommandLine

/// The allocator setting the tool makes at its start (`CommandLineTool.largeBlock`), which the benchmark's memory
/// figures show the effect of; here, that it does what it says, in a process of its own built from
/// `Tests/AllocatorProbe/probe.c` and the setting's C source.
@Suite struct LargeBlocksTests {
    @Test(.enabled(if: CCompiler.path != nil)) func aLargeBlockIsMappedOnItsOwnOnceTheToolsSettingIsMade() throws {
        #if canImport(Glibc)
            let directory = TemporaryDirectory()
            let probe = directory.path + "/probe"
            let sources = packageRoot.appendingPathComponent("Sources/CAllocator")
            let built = try run(
                CCompiler.path!,
                [
                    "-O1", "-o", probe, packageRoot.appendingPathComponent("Tests/AllocatorProbe/probe.c").path,
                    sources.appendingPathComponent("allocator.c").path, "-I", sources.appendingPathComponent("include").path,
                ])
            try #require(built.status == 0, "the probe did not build: \(built.errorOutput)")
            let probed = try run(probe, [String(CommandLineTool.largeBlock)])
            #expect(probed.status == 0)
            // Before: from glibc's heap, the premise (were it mapped already, the test would show nothing).
            #expect(probed.output == "mapped before: 0, setting: 0, mapped after: 1\n")
        #endif
    }
}
