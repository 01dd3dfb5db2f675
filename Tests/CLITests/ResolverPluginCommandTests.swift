import Foundation
import TestSupport
import Testing

/// The resolvers of issue 5 through `truce`: config errors `explain` reports, drivers only from the store's own config.
@Suite(.timeLimit(.minutes(10))) struct ResolverPluginCommandTests {
    /// A store with `key` in conflict between a laptop and a phone.
    func conflict(_ key: String, base: String, laptop: String, phone: String) throws -> CLIStore {
        let store = try CLIStore()
        try store.saveConflict(key, base: .text(base), heads: [("laptop", .text(laptop)), ("phone", .text(phone))])
        return store
    }

    func setAttributes(_ store: CLIStore, _ text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: store.path + "/info/attributes"))
    }

    func setConfig(_ store: CLIStore, _ name: String, _ value: String) throws {
        #expect(try git("-C", store.path, "config", name, value).status == 0)
    }

    @Test(arguments: [
        (
            "resolver.deduplicate.keep", "newest",
            "truce: invalid configuration: resolver.deduplicate.keep = newest: expected smallest-key, latest:<field> or smallest:<field>"
        ),
        (
            "resolver.deduplicate.fallback", "list-conflicts",
            "truce: invalid configuration: resolver.deduplicate.key is missing: name the field that identifies a record (for example uuid)"
        ),
        (
            "truce.deleteConflict", "keep-both",
            "truce: invalid configuration: truce.deleteConflict = keep-both: expected one of modify-wins, delete-wins"
        ),
    ])
    func explainReportsAConfigErrorOnOneLineWithExitTwo(name: String, value: String, message: String) throws {
        let store = try conflict("r.json", base: "[]", laptop: "[{\"uuid\":1}]", phone: "[{\"uuid\":2}]")
        try setAttributes(store, "*.json merge=deduplicate\n")
        // Every row but the missing-key one names the key field, so that only its own line is wrong.
        if name != "resolver.deduplicate.fallback" { try setConfig(store, "resolver.deduplicate.key", "uuid") }
        try setConfig(store, name, value)
        let before = snapshot(ofStore: store.path)
        let explain = try store.run("explain", "r.json")
        #expect(explain.status == 2)
        #expect(explain.errorLines == [message])
        #expect(explain.output.contains("resolver: none, the configuration is invalid"))
        let resolve = try store.run("resolve", "r.json")
        #expect(resolve.status == 2)
        #expect(resolve.errorLines == [message])
        #expect(snapshot(ofStore: store.path) == before)
    }

    @Test func explainShowsTheDriverCommandWhereItCameFromAndTheDeletePolicy() throws {
        let store = try conflict("a.rs", base: "a\n", laptop: "b\n", phone: "c\n")
        try setAttributes(store, "*.rs merge=mergiraf\n")
        try setConfig(store, "merge.mergiraf.driver", "mergiraf merge --git %O %A %B -s %S -x %X -y %Y -p %P -l %L")
        try setConfig(store, "resolver.mergiraf.fallback", "list-conflicts")
        let explain = try store.run("explain", "a.rs")
        #expect(explain.status == 0, "\(explain.errorOutput)")
        let lines = explain.output.split(separator: "\n").map(String.init)
        #expect(lines.contains("resolver: mergiraf (from info/attributes line 1: *.rs merge=mergiraf)"))
        #expect(
            lines.contains("definition: merge.mergiraf.driver = mergiraf merge --git %O %A %B -s %S -x %X -y %Y -p %P -l %L (the store's config)"))
        #expect(lines.contains("delete conflicts: modify-wins (default)"))
        let json = try store.json("explain", "a.rs")
        #expect((json["definitions"] as? [String: String])?["mergiraf"]?.hasPrefix("merge.mergiraf.driver = mergiraf merge") == true)
        #expect(json["deleteConflict"] as? String == "modify-wins")
    }

    @Test func aDriverInAGlobalConfigIsNeverRun() throws {
        let store = try conflict("a.md", base: "a\n", laptop: "b\n", phone: "c\n")
        let home = TemporaryDirectory("truce-home")
        let marker = home.file("ran")
        // The global file also names an attributes file routing to the driver: truce reads neither.
        let attributes = home.write(.text("*.md merge=evil\n"), to: "attributes")
        let global = home.write(
            .text("[core]\n\tattributesFile = \(attributes)\n[merge \"evil\"]\n\tdriver = touch \(marker) && cp %B %A\n"),
            to: ".gitconfig")
        try FileManager.default.createDirectory(atPath: home.file("xdg/git"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: global, toPath: home.file("xdg/git/config"))
        let environment = ["HOME": home.path, "XDG_CONFIG_HOME": home.file("xdg"), "GIT_CONFIG_GLOBAL": global, "GIT_CONFIG_NOSYSTEM": "1"]
        let before = snapshot(ofStore: store.path)

        let explain = try truce(["explain", "a.md"], store: store.path, environment: environment)
        #expect(explain.status == 0, "\(explain.errorOutput)")
        #expect(explain.output.contains("resolver: three-way (from default: no attributes line sets merge for this key)"), "\(explain.output)")
        let resolve = try truce(["resolve", "a.md", "--resolver", "evil"], store: store.path, environment: environment)
        #expect(resolve.status == 2)
        #expect(
            resolve.errorLines == [
                "truce: unknown resolver 'evil' (--resolver evil): register it in the resolvers the store is opened with (resolvers:) "
                    + "or the call is given (registry:), or define merge.evil.driver in the store's config"
            ])
        #expect(!FileManager.default.fileExists(atPath: marker))
        #expect(snapshot(ofStore: store.path) == before)
    }

    @Test func aDriverResolvesThroughTheCLIAndAFailingOneNeedsAPerson() throws {
        let store = try conflict("a.md", base: "a\nb\nc\n", laptop: "A\nb\nc\n", phone: "a\nb\nC\n")
        try setAttributes(store, "*.md merge=mine\n")
        try setConfig(store, "merge.mine.driver", "exit 1")
        let before = snapshot(ofStore: store.path)
        let failed = try store.run("resolve", "a.md")
        #expect(failed.status == 1)
        #expect(failed.output.split(separator: "\n").first?.hasPrefix("passed: mine: merging version ") == true)
        #expect(failed.output.contains("it exited with status 1: conflicts remain"))
        #expect(snapshot(ofStore: store.path) == before)

        try setConfig(store, "merge.mine.driver", "git merge-file %A %O %B")
        let resolved = try store.run("resolve", "a.md")
        #expect(resolved.status == 0, "\(resolved.errorOutput)")
        #expect(resolved.output.hasPrefix("resolved a.md with mine: "))
        #expect(try store.run("cat", "a.md").output == "A\nb\nC\n")
    }

    @Test func malformedJSONInAHeadIsExitTwoNamingTheVersion() throws {
        let store = try CLIStore()
        let first = try store.save("s.json", "{\"a\": 1}", "--device", "origin", "--date", "2026-11-30T09:00:00Z")
        let bad = try store.save("s.json", "{\"a\": ", "--device", "laptop", "--base", first, "--date", "2026-11-30T10:00:00Z")
        try store.save("s.json", "{\"a\": 2}", "--device", "phone", "--base", first, "--date", "2026-11-30T11:00:00Z")
        try setAttributes(store, "*.json merge=last-writer-wins\n")
        try setConfig(store, "resolver.last-writer-wins.granularity", "key")
        let before = snapshot(ofStore: store.path)
        let result = try store.run("resolve", "s.json")
        #expect(result.status == 2)
        #expect(result.errorLines.count == 1)
        #expect(result.errorLines.first?.hasPrefix("truce: version \(bad.prefix(7)) of 's.json' is not valid JSON") == true, "\(result.errorLines)")
        #expect(snapshot(ofStore: store.path) == before)
    }

    @Test func aDeleteConflictResolvesByPolicyThroughTheCLI() throws {
        let store = try CLIStore()
        let first = try store.save("a.txt", "x\n", "--device", "origin", "--date", "2026-11-30T09:00:00Z")
        try store.save("a.txt", "edited\n", "--device", "laptop", "--base", first, "--date", "2026-11-30T10:00:00Z")
        #expect(try store.run("delete", "a.txt", "--device", "phone", "--base", first, "--date", "2026-11-30T11:00:00Z").status == 0)
        let resolved = try store.run("resolve", "a.txt")
        #expect(resolved.status == 0, "\(resolved.errorOutput)")
        #expect(resolved.output.hasPrefix("resolved a.txt with modify-wins: "))
        #expect(try store.run("cat", "a.txt").output == "edited\n")
        let id = String(resolved.output.trimmingCharacters(in: .whitespacesAndNewlines).suffix(40))
        let trailers = try git("-C", store.path, "log", "-1", "--format=%(trailers:key=Resolved-By,valueonly)%p", id).output
        #expect(trailers.hasPrefix("modify-wins\n"))
        #expect(trailers.split(separator: "\n").last?.split(separator: " ").count == 2)
    }

    @Test func aDriverThatPassesOnHeadsThatMergeCleanlyLeavesOnePointForAPerson() throws {
        // The heads change different lines, so a line analysis alone finds nothing to decide.
        let store = try conflict("a.md", base: "a\nb\nc\n", laptop: "A\nb\nc\n", phone: "a\nb\nC\n")
        try setAttributes(store, "*.md merge=mine\n")
        try setConfig(store, "merge.mine.driver", "exit 1")
        let before = snapshot(ofStore: store.path)
        let failed = try truce(["resolve", "a.md", "--json"], store: store.path)
        #expect(failed.status == 1)
        let report = try #require(JSONSerialization.jsonObject(with: failed.stdout) as? [String: Any])
        #expect(report["outcome"] as? String == "needsPerson")
        let points = try #require(report["points"] as? [[String: Any]])
        #expect(points.count == 1, "a person is needed, so there is something to answer: \(points)")
        #expect(points.first?["id"] as? String == "H1")
        #expect(try store.run("resolve", "a.md").output.contains("a.md: 1 conflict point among 2 heads"))
        #expect(try store.json("conflicts", "a.md")["points"].map { ($0 as? [Any])?.count } == 1)
        #expect(snapshot(ofStore: store.path) == before)

        let answered = try store.run("resolve", "a.md", "--take", "H1=both")
        #expect(answered.status == 0, "\(answered.errorOutput)")
        #expect(try store.run("cat", "a.md").output == "a\nb\nC\nA\nb\nc\n")
        #expect(try git("-C", store.path, "fsck", "--strict").status == 0)
    }
}
