internal import CAllocator
import Foundation
import Truce

extension CommandLineTool {
    /// Runs `truce` with the process's own arguments and exits with its exit code.
    ///
    /// An app's `main.swift` calls this to ship its own `truce`; `registry` holds the resolvers the store's config
    /// may name, the built-in ones (`ResolverRegistry.standard`) unless the app adds its own, and `name` is what the
    /// tool calls itself in errors, help and its version line.
    ///
    /// It first has the C allocator (glibc's, on Linux) unmap each block of 4 MB or more when it is freed, for the
    /// whole process (see `largeBlock`).
    public static func main(name: String = "truce", registry: ResolverRegistry = .standard) async -> Never {
        // The raw bytes: `CommandLine.arguments` would replace what is not UTF-8 with U+FFFD.
        let words = (1..<Int(CommandLine.argc)).map { index in
            CommandLine.unsafeArgv[index].map { Array(UnsafeBufferPointer(start: $0, count: strlen($0))).map(UInt8.init(bitPattern:)) } ?? []
        }
        _ = truce_allocator_unmap_blocks_from(largeBlock)
        var output = Output.standard
        output.toolName = name
        exit(await run(bytes: words, registry: registry, output: output).rawValue)
    }

    /// The size from which a block the process frees goes back to the system at once. Bulk work (an import, a first
    /// sync, a first push) frees buffers of megabytes batch after batch; glibc, by default, serves such blocks from its
    /// heap once one has been freed, and keeps what they leave, so the process's peak grew past what any batch held (a
    /// first sync of 100,000 documents: 300 MB resident for a heap of 140 MB at its peak). A block mapped on its own
    /// is faulted in afresh each time, so not every block: from 1 MB, the same sync took a quarter of a second more of
    /// the system's time, from 4 MB a tenth. A process-wide setting, made here and not in the library: an app decides
    /// for its own process.
    static let largeBlock = 4 << 20
}
