import Foundation
import TestSupport
import Testing

@testable import TruceCommandLine

/// `truce watch` as a user runs it: a process of its own, printing what other processes change, stopped by a signal.
@Suite(.timeLimit(.minutes(10))) struct WatchCommandTests {
    /// Starts `truce watch` on `store` and waits until it prints a probe save: it reports only what lands after it started.
    static func startWatch(_ store: CLIStore, _ options: String...) async throws -> BackgroundProcess {
        let watch = try BackgroundProcess(["watch"] + options, store: store.path)
        for _ in 0..<40 {
            try store.save("probe.txt", "probe\n", "--device", "prober")
            if (try? await waitUntil("the probe", within: 0.25) { watch.outputSoFar.contains("probe.txt") }) != nil { return watch }
        }
        watch.kill()
        throw DeadlinePassed(description: "truce watch printed none of 40 probe saves; stderr: \(watch.wait().errorOutput)")
    }

    /// The JSON objects `watch --json` printed, one per line, with `droppedValueCount` as text; a line that is not
    /// such an object fails the test.
    static func objects(in output: String) -> [[String: String]] {
        output.split(separator: "\n").compactMap { line in
            var object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            if let count = object?["droppedValueCount"] as? Int { object?["droppedValueCount"] = String(count) }
            let strings = object as? [String: String]
            if strings == nil { Issue.record("not a JSON object of strings and a count: \(line)") }
            return strings
        }
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func jsonPrintsAnotherProcessSaveThenExitsZeroOnTheSignal(signal: Int32) async throws {
        let store = try CLIStore()
        let watch = try await Self.startWatch(store, "--json")
        defer { watch.kill() }
        let saved = try store.save("notes/a.md", "hello\n", "--device", "phone")
        try await waitUntil("watch to print the save of \(saved)", within: 1) { watch.outputSoFar.contains(saved) }
        let printed = try #require(Self.objects(in: watch.outputSoFar).first { $0["version"] == saved })
        #expect(printed["key"] == "notes/a.md")
        #expect(printed["author"] == "phone")
        #expect(printed["kind"] == "save")
        #expect(printed["previous"] == "absent")
        #expect(printed["current"] == "settled")
        #expect(printed["date"].flatMap { try? Date($0, strategy: .iso8601) } != nil, "date: \(printed["date"] ?? "none")")
        watch.signal(signal)
        let ending = try await watch.wait(within: 5)
        #expect(!ending.killed && ending.status == 0)
        #expect(ending.errorLines.isEmpty, "stderr: \(ending.errorOutput)")
    }

    @Test func textLeavesOutTheExcludedAuthorAndShowsTheStates() async throws {
        let store = try CLIStore()
        let base = try store.save("a.txt", "0\n", "--device", "phone")
        let watch = try await Self.startWatch(store, "--exclude-author", "laptop")
        defer { watch.kill() }
        try store.save("a.txt", "1\n", "--device", "laptop", "--base", base)
        let conflicting = try store.save("a.txt", "2\n", "--device", "phone", "--base", base)
        try await waitUntil("watch to print the conflicting save", within: 3) { watch.outputSoFar.contains(conflicting) }
        let lines = watch.outputSoFar.split(separator: "\n").filter { !$0.hasSuffix("probe.txt") }
        #expect(lines.count == 1, "\(lines)")
        let line = try #require(lines.first)
        #expect(line.hasPrefix("save  \(conflicting)  "))
        #expect(line.hasSuffix("  phone  settled → in conflict  a.txt"))
        watch.signal(SIGTERM)
        let ending = try await watch.wait(within: 5)
        #expect(!ending.killed && ending.status == 0)
    }

    @Test(arguments: [
        ("plain", "plain"), ("tab\there", "tab\\u{9}here"), ("\u{1B}[2Jwiped", "\\u{1B}[2Jwiped"), ("bell\u{7}", "bell\\u{7}"),
        ("c1\u{85}next", "c1\\u{85}next"), ("del\u{7F}", "del\\u{7F}"), ("café ☕︎", "café ☕︎"),
    ])
    func controlCharactersAreEscaped(text: String, printed: String) {
        #expect(Array(WatchCommand.escapingControlCharacters(text).utf8) == Array(printed.utf8))
    }

    @Test func badUsageAndAMissingStoreAreOneLineErrors() throws {
        let store = try CLIStore()
        let extra = try store.run("watch", "notes.md")
        #expect(extra.status == 2)
        #expect(extra.errorLines == ["truce: watch: unexpected argument 'notes.md'; see 'truce help watch'"])
        let missing = try truce(["watch"], store: store.directory.file("nowhere"))
        #expect(missing.status == 3)
        #expect(missing.errorLines.count == 1)
        #expect(missing.errorLines.first?.hasPrefix("truce: ") == true)
        let help = try truce(["help", "watch"])
        #expect(help.output.hasPrefix("usage: truce watch [--json] [--exclude-author NAME]"))
        #expect(try truce(["help"]).output.contains("\n  watch "))
    }
}
