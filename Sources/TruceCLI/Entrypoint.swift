import Foundation

@main
struct Entrypoint {
    static func main() {
        // The raw bytes: `CommandLine.arguments` would replace what is not UTF-8 with U+FFFD.
        let words = (1..<Int(CommandLine.argc)).map { index in
            CommandLine.unsafeArgv[index].map { Array(UnsafeBufferPointer(start: $0, count: strlen($0))).map(UInt8.init(bitPattern:)) } ?? []
        }
        exit(CommandLineTool.run(bytes: words).rawValue)
    }
}
