import Foundation
import Truce

struct ReplicasCommand: Command {
    static let name = "replicas"
    static let synopsis = "truce replicas [--json] | truce replicas --forget ID REMOTE"
    static let summary = "list the replicas known from the hubs synced with, and when each last published; --forget retires one"
    static let options: [Option] = [
        .value("--forget", help: "sync with REMOTE, then take replica ID's manifest off it, once the others reach all it listed"),
        .json,
    ]

    static func run(_ invocation: Invocation) async throws -> ExitCode {
        if let id = invocation.arguments.value("--forget") {
            try invocation.rejectExtraPositionals(beyond: 1)
            guard let remote = invocation.arguments.positionals.first else { throw UsageError("--forget needs REMOTE, the hub to forget it on") }
            let report = try await invocation.openStore().forgetReplica(id, on: remote)
            if invocation.wantsJSON {
                try invocation.output.json(["forgotten": id, "remote": report.remote])
            } else {
                invocation.output.out("forgot replica \(id) on \(report.remote)")
            }
            return .success
        }
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
