import Foundation
import Truce

extension CommandLineTool {
    /// Runs `truce` with the process's own arguments and exits with its exit code.
    ///
    /// An app's `main.swift` calls this to ship its own `truce`; `registry` holds the resolvers the store's config
    /// may name, the built-in ones (`ResolverRegistry.standard`) unless the app adds its own, and `name` is what the
    /// tool calls itself in errors, help and its version line.
    public static func main(name: String = "truce", registry: ResolverRegistry = .standard) async -> Never {
        // The raw bytes: `CommandLine.arguments` would replace what is not UTF-8 with U+FFFD.
        let words = (1..<Int(CommandLine.argc)).map { index in
            CommandLine.unsafeArgv[index].map { Array(UnsafeBufferPointer(start: $0, count: strlen($0))).map(UInt8.init(bitPattern:)) } ?? []
        }
        var output = Output.standard
        output.toolName = name
        exit(await run(bytes: words, registry: registry, output: output).rawValue)
    }
}
