import Foundation
import Testing
import TestSupport

/// Several `truce` processes write one store at once; every acknowledged version must survive.
struct ConcurrentProcessTests {
    static let processes = 6
    static let savesPerProcess = 8

    /// Starts `processes` shells, each saving `savesPerProcess` versions and printing the acknowledged ids.
    static func runWriters(store: CLIStore, baseArguments: String) throws -> Set<String> {
        let results = try (0..<processes).map { writer in
            let script = """
                for i in $(seq \(savesPerProcess)); do
                  printf 'writer \(writer) save %s\\n' "$i" | "$TRUCE" --store "$STORE" save shared.txt - --device w\(writer) \(baseArguments) || exit 1
                done
                """
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", script]
            process.environment = ["TRUCE": truceExecutable, "STORE": store.path, "PATH": "/usr/bin:/bin"]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            return (process, output)
        }.map { process, output in
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: data, as: UTF8.self))
        }
        #expect(results.allSatisfy { $0.0 == 0 })
        return Set(results.flatMap { $0.1.split(separator: "\n").map(String.init) })
    }

    @Test func processesSavingFromOneBaseAllBecomeHeads() throws {
        let store = try CLIStore()
        let base = try store.save("shared.txt", "base\n")
        let acknowledged = try Self.runWriters(store: store, baseArguments: "--base \(base)")
        #expect(acknowledged.count == Self.processes * Self.savesPerProcess)
        let versions = try store.json("versions", "shared.txt")
        let heads = [versions["current"] as? [String: Any]].compactMap { $0 } + (versions["conflicts"] as? [[String: Any]] ?? [])
        #expect(Set(heads.compactMap { $0["id"] as? String }) == acknowledged)
        #expect((versions["base"] as? [String: Any])?["id"] as? String == base)
        #expect(try git("-C", store.path, "fsck", "--strict").status == 0)
    }

    @Test func processesSavingOnTheCurrentVersionLoseNothing() throws {
        let store = try CLIStore()
        try store.save("shared.txt", "base\n")
        let acknowledged = try Self.runWriters(store: store, baseArguments: "")
        #expect(acknowledged.count == Self.processes * Self.savesPerProcess)
        let log = try store.run("log", "shared.txt", "--json")
        let history = try #require(JSONSerialization.jsonObject(with: log.stdout) as? [[String: Any]])
        let everything = Set(history.compactMap { $0["id"] as? String })
        #expect(acknowledged.isSubset(of: everything))
        #expect(try git("-C", store.path, "fsck", "--strict").status == 0)
    }
}
