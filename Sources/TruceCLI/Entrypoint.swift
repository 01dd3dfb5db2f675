import Foundation

@main
struct Entrypoint {
    static func main() {
        exit(CommandLineTool.run(Array(CommandLine.arguments.dropFirst())).rawValue)
    }
}
