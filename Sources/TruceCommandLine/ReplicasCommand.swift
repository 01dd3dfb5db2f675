import Foundation
import Truce

struct ReplicasCommand: Command {
    static let name = "replicas"
    static let synopsis = "truce replicas [--json]"
    static let summary = "list the replicas known from the hubs synced with, and when each last published"
    static let options: [Option] = [.json]

    static func run(_ invocation: Invocation) async throws -> ExitCode {
        try invocation.rejectExtraPositionals(beyond: 0)
        let replicas = try invocation.openStore().replicas()
        if invocation.wantsJSON {
            try invocation.output.json(replicas)
            return .success
        }
        // `<id>  <date>  <manifests>` and "(this store)": newest first, as the library lists them.
        for replica in replicas {
            let own = replica.isThisStore ? "  (this store)" : ""
            invocation.output.out("\(replica.id)  \(ISO8601.format(replica.lastPublished))  \(replica.manifests) manifests\(own)")
        }
        invocation.output.out("\(replicas.count) \(replicas.count == 1 ? "replica" : "replicas")")
        return .success
    }
}
