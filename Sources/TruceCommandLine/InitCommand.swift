import Foundation
import Truce

struct InitCommand: Command {
    static let name = "init"
    static let synopsis = "truce [--store DIR] init"
    static let summary = "create a store"
    static let options: [Option] = [.json]

    static func run(_ invocation: Invocation) async throws -> ExitCode {
        try invocation.rejectExtraPositionals(beyond: 0)
        let path = try invocation.storePath()
        _ = try DocumentStore(directory: URL(fileURLWithPath: path), resolvers: invocation.registry, mode: .createNew)
        // The path as given, as `--store` and $TRUCE_STORE name it.
        if invocation.wantsJSON {
            try invocation.output.json(["store": path])
        } else {
            invocation.output.out("created store at \(path)")
        }
        return .success
    }
}
