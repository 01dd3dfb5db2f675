import Truce

struct InitCommand: Command {
    static let name = "init"
    static let synopsis = "truce [--store DIR] init"
    static let summary = "create a store"
    static let options: [Option] = [.json]

    static func run(_ invocation: Invocation) async throws -> ExitCode {
        try invocation.rejectExtraPositionals(beyond: 0)
        let store = try DocumentStore.create(at: invocation.storePath())
        if invocation.wantsJSON {
            try invocation.output.json(["store": store.path])
        } else {
            invocation.output.out("created store at \(store.path)")
        }
        return .success
    }
}
