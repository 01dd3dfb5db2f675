import Foundation
import TestSupport
import Testing

/// Long operations draw a progress line on a terminal (here a pseudo-terminal made by `script`), and nothing on a pipe.
@Suite(.timeLimit(.minutes(10))) struct ProgressLineTests {
    /// Runs `truce --store STORE arguments` with its standard output and error on a pseudo-terminal; what it printed.
    static func onTerminal(_ arguments: [String], store: String) throws -> String {
        let command = ([truceExecutable, "--store", store] + arguments).map { "'" + $0 + "'" }.joined(separator: " ")
        let result = try run("/usr/bin/script", ["-qec", command, "/dev/null"])
        return result.output
    }

    /// A store of `count` imported documents, and `a.txt` in conflict.
    static func store(documents count: Int) throws -> CLIStore {
        let store = try CLIStore()
        var stream = ""
        for index in 0..<count { stream += "M 100644 inline d/\(index).txt\ndata 2\n\(index % 10)\n\n" }
        #expect(try store.run("import", "-", input: .text(stream)).status == 0)
        let base = try store.save("a.txt", "base\n")
        try store.save("a.txt", "one\n")
        try store.save("a.txt", "two\n", "--base", base)
        return store
    }

    @Test func importExportAndResolveAllShowTheirCountOnATerminalOnly() throws {
        let store = try Self.store(documents: 600)
        let out = TemporaryDirectory("truce-progress")
        let export = try Self.onTerminal(["export", out.file("terminal")], store: store.path)
        #expect(export.contains("truce: exporting documents: 601 of 601"), "export on a terminal: \(export.debugDescription)")
        let resolve = try Self.onTerminal(["resolve", "--all", "--resolver", "overwrite-with-current"], store: store.path)
        #expect(resolve.contains("truce: resolving documents in conflict: 1 of 1"), "resolve --all on a terminal: \(resolve.debugDescription)")

        let folder = TemporaryDirectory("truce-progress-import")
        for index in 0..<600 { try Data("\(index)\n".utf8).write(to: URL(fileURLWithPath: folder.file("\(index).txt"))) }
        let imported = try Self.onTerminal(["import", folder.path, "--prefix", "more/"], store: store.path)
        #expect(imported.contains("truce: saving versions: 600 of 600"), "import on a terminal: \(imported.debugDescription)")

        let piped = try store.run("export", out.file("pipe"))
        #expect(piped.status == 0 && piped.errorOutput.isEmpty, "export on a pipe: \(piped.errorOutput.debugDescription)")
    }

    /// A first sync from a hub on a local path moves nothing over a wire: its line counts the heads it checks and the
    /// objects it stores.
    @Test func aFirstSyncCountsTheHeadsItChecksAndTheObjectsItStores() throws {
        let store = try Self.store(documents: 600)
        let bare = try BareRepository("truce-progress-hub"), hub = bare.path
        #expect(try store.run("sync", hub).status == 0)
        let replica = try CLIStore()
        let synced = try Self.onTerminal(["sync", hub], store: replica.path)
        // 600 imported documents and a.txt's two heads in conflict.
        #expect(synced.contains("602 of 602 heads checked"), "sync on a terminal: \(synced.debugDescription)")
        // The line is redrawn as the count moves: it may show "0 of 1831" first; the last drawing is the final count.
        let stored = try #require(
            synced.matches(of: /([0-9]+) of ([0-9]+) objects stored/).last, "sync on a terminal: \(synced.debugDescription)")
        #expect(stored.1 == stored.2 && Int(stored.1)! > 1800, "\(stored.0)")
        #expect(try replica.run("cat", "d/5.txt").output == "5\n")
    }
}
