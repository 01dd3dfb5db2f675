import Foundation
import TestSupport
import Testing

/// Several `truce` processes write one store at once; every acknowledged version must survive.
@Suite(.timeLimit(.minutes(10))) struct ConcurrentProcessTests {
    static let processes = 6
    static let savesPerProcess = 8

    /// Starts `processes` shells, each saving `savesPerProcess` versions and printing the acknowledged ids.
    ///
    /// `document` names what writer `writer` saves; the shell expands `$i`, the save's number, in it.
    static func runWriters(store: CLIStore, baseArguments: String = "", document: (_ writer: Int) -> String = { _ in "shared.txt" }) throws -> Set<
        String
    > {
        let results = try (0..<processes).map { writer in
            let script = """
                for i in $(seq \(savesPerProcess)); do
                  printf 'writer \(writer) save %s\\n' "$i" | "$TRUCE" --store "$STORE" save "\(document(writer))" - --device w\(writer) \(baseArguments) || exit 1
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
        let acknowledged = try Self.runWriters(store: store)
        #expect(acknowledged.count == Self.processes * Self.savesPerProcess)
        let log = try store.run("log", "shared.txt", "--json")
        let history = try #require(JSONSerialization.jsonObject(with: log.stdout) as? [[String: Any]])
        let everything = Set(history.compactMap { $0["id"] as? String })
        #expect(acknowledged.isSubset(of: everything))
        #expect(try git("-C", store.path, "fsck", "--strict").status == 0)
    }

    /// No prune runs here: prune re-journals versions the journal lacks, which would hide a lost entry.
    @Test func processesSavingDifferentDocumentsAtOnceAreAllInTheChangeJournal() throws {
        let store = try CLIStore()
        let acknowledged = try Self.runWriters(store: store) { writer in "w\(writer)/$i.txt" }
        #expect(acknowledged.count == Self.processes * Self.savesPerProcess)
        let changes = try #require(try store.json("changes")["changes"] as? [[String: Any]])
        let journaled = changes.compactMap { $0["version"] as? String }
        #expect(journaled.count == acknowledged.count, "one journal entry per acknowledged save")
        #expect(acknowledged.subtracting(journaled).isEmpty, "truce changes lacks \(acknowledged.subtracting(journaled).count) acknowledged versions")
        #expect(Set(journaled).subtracting(acknowledged).isEmpty, "truce changes lists versions no save acknowledged")
        // The oracle: git itself walks the journal as one chain with an entry per save.
        let chain = try git("-C", store.path, "log", "--first-parent", "--format=%(trailers:key=Version,valueonly)", "refs/truce/journal")
        let chained = chain.output.split(separator: "\n").map(String.init)
        #expect(chained.count == acknowledged.count && Set(chained) == acknowledged, "git log of the journal has \(chained.count) entries")
        #expect(try git("-C", store.path, "fsck", "--strict").status == 0)
    }
}
