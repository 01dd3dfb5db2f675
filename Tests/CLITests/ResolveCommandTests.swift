import Foundation
import TestSupport
import Testing

/// `truce resolve` and `truce explain` through the real binary, with git as the oracle for what was written.
@Suite(.timeLimit(.minutes(10))) struct ResolveCommandTests {
    static let key = "notes/todo.md"

    /// A Markdown file with three sections, so two devices can edit different parts of it.
    static let plans = Data.text("# Plans\n\n## Monday\ncall the bank\n\n## Tuesday\nwater the plants\n\n## Wednesday\nwrite the report\n")
    /// The laptop edits Monday.
    static let laptopPlans = Data.text(
        "# Plans\n\n## Monday\ncall the bank at 9\nbring the papers\n\n## Tuesday\nwater the plants\n\n## Wednesday\nwrite the report\n")
    /// The phone edits Wednesday.
    static let phonePlans = Data.text("# Plans\n\n## Monday\ncall the bank\n\n## Tuesday\nwater the plants\n\n## Wednesday\nsend the report\n")

    /// A store whose `*.md` files merge with three-way, holding a laptop-versus-phone conflict on `notes/todo.md`.
    static func sectionConflict() throws -> (CLIStore, SavedConflict) {
        let store = try CLIStore()
        try store.writeAttributes("*.md merge=three-way\n")
        let conflict = try store.saveConflict(key, base: plans, heads: [("laptop", laptopPlans), ("phone", phonePlans)])
        return (store, conflict)
    }

    @Test func threeWaySettlesEditsToDifferentSectionsAsGitMergeFileDoes() throws {
        let (store, conflict) = try Self.sectionConflict()
        // git is the oracle: current (the phone, saved last) first, then the base, then the other head.
        let oracle = try gitMergeFile(current: Self.phonePlans, base: Self.plans, other: Self.laptopPlans)
        #expect(oracle.status == 0, "git finds the edits overlapping: \(oracle.output)")
        #expect(oracle.stdout != Self.phonePlans && oracle.stdout != Self.laptopPlans)

        let result = try store.run("resolve", Self.key, "--device", "desk")
        #expect(result.status == 0, "stderr: \(result.errorOutput)")
        #expect(result.errorLines.isEmpty, "stderr: \(result.errorOutput)")
        let resolution = try resolutionID(in: result, key: Self.key, resolver: "three-way")

        #expect(try store.run("cat", Self.key).stdout == oracle.stdout)
        #expect(try store.gitInStore("show", "\(resolution):\(Self.key)").stdout == oracle.stdout)
        try expectResolution(resolution, settles: conflict, key: Self.key, resolver: "three-way", in: store)

        let versions = try store.run("versions", Self.key).output.split(separator: "\n").map(String.init)
        #expect(versions.count == 2, "\(versions)")
        #expect(versions.first == "\(Self.key): settled")
        #expect(versions.last?.hasPrefix("current   \(resolution)  ") == true)
        // The resolution is a function of the conflict, not of who ran it: the resolver is its author.
        #expect(versions.last?.hasSuffix("  three-way  resolution by three-way") == true)

        let graph = try store.gitInStore("log", "--graph", "--all", "--format=%H %an %s").output
        #expect(graph.contains("*   \(resolution) three-way Resolve \(Self.key)\n|\\"), "graph:\n\(graph)")
        #expect(graph.contains("\(conflict.heads[0]) laptop Save"))
        #expect(graph.contains("\(conflict.current) phone Save"))
        #expect(try store.gitInStore("rev-list", "--all", "--merges").output == resolution + "\n")
    }

    @Test func overlappingEditsNeedAPersonAndChangeNothing() throws {
        let store = try CLIStore()
        try store.writeAttributes("*.md merge=three-way\n")
        let base = Data.text("a\nb\nc\n"), laptop = Data.text("a\nB from the laptop\nc\n"), phone = Data.text("a\nB from the phone\nc\n")
        let conflict = try store.saveConflict(Self.key, base: base, heads: [("laptop", laptop), ("phone", phone)])
        #expect(try gitMergeFile(current: phone, base: base, other: laptop).status == 1, "git must see one conflict too")

        let before = snapshot(ofStore: store.path)
        let result = try store.run("resolve", Self.key, "--device", "desk")
        #expect(result.status == 1)
        #expect(result.errorLines.isEmpty, "stderr: \(result.errorOutput)")
        let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first == "\(Self.key): 1 conflict point among 2 heads (base \(conflict.base.prefix(7)))")
        #expect(lines.contains("H1  base line 2"), "stdout:\n\(result.output)")
        #expect(lines.contains("    | B from the laptop") && lines.contains("    | B from the phone"))
        #expect(lines.contains { $0.hasPrefix("answer with: truce resolve \(Self.key) --take HUNK=") })
        #expect(!result.output.contains("H2"))
        #expect(snapshot(ofStore: store.path) == before)

        let json = try jsonObject(try store.run("resolve", Self.key, "--json"))
        #expect(json["outcome"] as? String == "needsPerson")
        #expect(json["resolver"] as? String == "three-way")
        #expect((json["points"] as? [[String: Any]])?.map { $0["id"] as? String } == ["H1"])
        #expect(snapshot(ofStore: store.path) == before)
        #expect(try store.run("status").output == "\(Self.key): in conflict (2 heads)\n")

        // With one conflict version, `theirs` is unambiguous: the laptop's line.
        let answered = try store.run("resolve", Self.key, "--take", "H1=theirs", "--device", "desk")
        #expect(answered.status == 0, "stderr: \(answered.errorOutput)")
        let resolution = try resolutionID(in: answered, key: Self.key, resolver: "person")
        #expect(try store.run("cat", Self.key).stdout == laptop)
        try expectResolution(resolution, settles: conflict, key: Self.key, resolver: "person", in: store)
    }

    /// A document routed to list-conflicts, settled by a person picking a version, a whole file or a deletion:
    /// the resolution records that a person settled it, never the resolver that only listed the points.
    @Test(arguments: [["--take", "H1=LAPTOP"], ["--content", "-"], ["--delete"]])
    func aPersonsAnswerToListConflictsIsRecordedAsAPersons(answer: [String]) throws {
        let store = try CLIStore()
        try store.writeAttributes("*.txt merge=list-conflicts\n")
        let conflict = try store.saveConflict("a.txt", base: .text("base\n"), heads: [("laptop", .text("laptop\n")), ("phone", .text("phone\n"))])
        let listed = try store.run("resolve", "a.txt")
        #expect(listed.status == 1, "stderr: \(listed.errorOutput)")
        let words = ["resolve", "a.txt"] + answer.map { $0 == "H1=LAPTOP" ? "H1=\(conflict.heads[0])" : $0 } + ["--device", "desk"]
        let answered = try truce(words, store: store.path, input: .text("edited\n"))
        #expect(answered.status == 0, "stderr: \(answered.errorOutput)")
        let resolution = try resolutionID(in: answered, key: "a.txt", resolver: "person")
        try expectResolution(resolution, settles: conflict, key: "a.txt", resolver: "person", in: store, deleted: answer == ["--delete"])
    }

    @Test func overwriteWithCurrentKeepsTheCurrentBinaryAndResolvesEveryOtherHead() throws {
        let store = try CLIStore()
        try store.writeAttributes("*.png merge=overwrite-with-current\n")
        let key = "images/logo.png"
        let header: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00]
        let heads = ["first", "second\u{0}", "third"].map { Data(header) + Data($0.utf8) }
        let conflict = try store.saveConflict(
            key, base: Data(header) + Data("base".utf8),
            heads: [("laptop", heads[0]), ("phone", heads[1]), ("tablet", heads[2])])
        let conflicts = try store.run("conflicts", key)
        #expect(conflicts.output.contains("H1  whole document"))
        #expect(conflicts.output.contains("(binary, \(heads[2].count) bytes)"))

        let result = try store.run("resolve", key, "--device", "desk")
        #expect(result.status == 0, "stderr: \(result.errorOutput)")
        let resolution = try resolutionID(in: result, key: key, resolver: "overwrite-with-current")
        #expect(try store.run("cat", key).stdout == heads[2])
        // The shape of `git merge -s ours`: the current version's tree, every head a parent.
        #expect(
            try store.gitInStore("rev-parse", "\(resolution)^{tree}").output == store.gitInStore("rev-parse", "\(conflict.current)^{tree}").output)
        try expectResolution(resolution, settles: conflict, key: key, resolver: "overwrite-with-current", in: store)
        let versions = try store.json("versions", key)
        #expect((versions["conflicts"] as? [Any])?.isEmpty == true)
    }

    @Test func aBinaryMarkdownConflictPassesFromThreeWayToItsFallback() throws {
        let store = try CLIStore()
        try store.writeAttributes("*.md merge=three-way\n")
        let current = Data("a\u{0}phone\n".utf8)
        let conflict = try store.saveConflict(
            "blob.md", base: Data("a\u{0}base\n".utf8),
            heads: [("laptop", Data("a\u{0}laptop\n".utf8)), ("phone", current)])
        let before = snapshot(ofStore: store.path)
        let alone = try store.run("resolve", "blob.md")
        #expect(alone.status == 1)
        #expect(alone.output.hasPrefix("passed: three-way: binary content\n"), "stdout:\n\(alone.output)")
        #expect(snapshot(ofStore: store.path) == before)

        try store.setStoreConfig("resolver.three-way.fallback", "overwrite-with-current")
        let result = try store.run("resolve", "blob.md", "--device", "desk")
        #expect(result.status == 0, "stderr: \(result.errorOutput)")
        let resolution = try resolutionID(in: result, key: "blob.md", resolver: "overwrite-with-current")
        #expect(try store.run("cat", "blob.md").stdout == current)
        try expectResolution(resolution, settles: conflict, key: "blob.md", resolver: "overwrite-with-current", in: store)
    }

    @Test func dryRunSaysWhatWouldHappenAndWritesNothing() throws {
        let (store, _) = try Self.sectionConflict()
        let oracle = try gitMergeFile(current: Self.phonePlans, base: Self.plans, other: Self.laptopPlans).stdout
        let before = snapshot(ofStore: store.path)

        let result = try store.run("resolve", Self.key, "--dry-run")
        #expect(result.status == 0, "stderr: \(result.errorOutput)")
        #expect(result.output == "dry run: three-way would resolve \(Self.key) into \(oracle.count) bytes; nothing was written\n")
        #expect(snapshot(ofStore: store.path) == before)

        let json = try jsonObject(try store.run("resolve", Self.key, "--dry-run", "--json"))
        #expect(json["outcome"] as? String == "wouldResolve")
        #expect(json["resolver"] as? String == "three-way")
        #expect((json["content"] as? String).map { Data($0.utf8) } == oracle)
        #expect(json["contentBase64"] == nil)
        #expect(snapshot(ofStore: store.path) == before)
        #expect(try store.run("status").output == "\(Self.key): in conflict (2 heads)\n")
    }

    @Test func dryRunJSONCarriesBinaryContentUnchanged() throws {
        let store = try CLIStore()
        try store.writeAttributes("*.png merge=overwrite-with-current\n")
        // 0x89 and 0xFF are not UTF-8: decoding them as text would replace them.
        let current = Data([0x89, 0x50, 0x4E, 0x47, 0x00, 0xFF, 0x01])
        try store.saveConflict("a.png", base: Data([0x89, 0x00]), heads: [("laptop", Data([0x89, 0x00, 0x02])), ("phone", current)])
        let before = snapshot(ofStore: store.path)
        let json = try jsonObject(try store.run("resolve", "a.png", "--dry-run", "--json"))
        #expect(json["outcome"] as? String == "wouldResolve")
        #expect(json["content"] == nil)
        #expect((json["contentBase64"] as? String).flatMap { Data(base64Encoded: $0) } == current)
        let text = try store.run("resolve", "a.png", "--dry-run")
        #expect(text.output == "dry run: overwrite-with-current would resolve a.png into \(current.count) bytes; nothing was written\n")
        #expect(snapshot(ofStore: store.path) == before)
    }

    @Test func dryRunOfAConflictThatNeedsAPersonExitsOneAndWritesNothing() throws {
        let store = try CLIStore()
        try store.saveConflict("a.txt", base: .text("x\n"), heads: [("laptop", .text("y\n")), ("phone", .text("z\n"))])
        let before = snapshot(ofStore: store.path)
        let result = try store.run("resolve", "a.txt", "--dry-run")
        #expect(result.status == 1)
        #expect(result.output.contains("H1  base line 1"))
        #expect(snapshot(ofStore: store.path) == before)
    }

    // MARK: - Bad input

    /// One bad `resolve` (or `conflicts`, `reopen`) against a store holding a three-head, two-point conflict on
    /// `notes/todo.md` and a settled `settled.md`; `$FILE` is a readable file.
    /// The error line for a store routing `*.md` to a resolver named `nope`, which names the fix.
    static let unknownNope =
        "unknown resolver 'nope' (info/attributes line 1: *.md merge=nope): register it in the resolvers the store is opened with "
        + "(resolvers:) or the call is given (registry:), or define merge.nope.driver in the store's config"

    struct BadInput: CustomTestStringConvertible, Sendable {
        let words: [String]
        var attributes = "*.md merge=three-way\n"
        var config: [String: String] = [:]
        /// Text appended to the store's config file as it is, for syntax git cannot parse.
        var appendedToConfig: String? = nil
        let message: String
        var testDescription: String {
            var text = words.joined(separator: " ")
            if attributes != "*.md merge=three-way\n" { text += " with attributes \(attributes.debugDescription)" }
            for (name, value) in config.sorted(by: { $0.key < $1.key }) { text += " with \(name)=\(value)" }
            if let appendedToConfig { text += " with \(appendedToConfig.debugDescription) in config" }
            return text
        }
    }

    static let badInputs: [BadInput] = [
        BadInput(words: ["resolve", key, "--resolver", "nope"], message: "unknown resolver 'nope' (--resolver nope)"),
        BadInput(
            words: ["resolve", key], attributes: "*.md merge=nope\n",
            message: "unknown resolver 'nope' (info/attributes line 1: *.md merge=nope)"),
        BadInput(
            words: ["resolve", key], attributes: "*.md merge=three-way\n!*.md merge=union\n",
            message: "info/attributes line 2: negative patterns are not allowed"),
        BadInput(
            words: ["resolve", key], attributes: "*.md merge=three-way\r\n!*.md merge=union\r\n",
            message: "info/attributes line 2: negative patterns are not allowed"),
        BadInput(
            words: ["resolve", key], config: ["resolver.three-way.style": "fancy"],
            message: "resolver.three-way.style = fancy: expected one of merge, diff3, zdiff3"),
        BadInput(
            words: ["resolve", key], config: ["resolver.three-way.fallback": "nope"],
            message: "unknown resolver 'nope' (resolver.three-way.fallback in config)"),
        BadInput(words: ["resolve", key], appendedToConfig: "[broken\n", message: "invalid configuration: failed to parse config file"),
        BadInput(words: ["resolve", key, "--take", "H9=ours"], message: "there is no conflict point H9 in \(key); points: H1, H2"),
        BadInput(words: ["resolve", key, "--take", "H1=bogus", "--take", "H2=ours"], message: "unknown choice 'bogus' for H1"),
        BadInput(words: ["resolve", key, "--take", "H1=ours"], message: "conflict point H2 has no answer"),
        BadInput(words: ["resolve", key, "--take", "H1=theirs", "--take", "H2=ours"], message: "H1=theirs is ambiguous with 2 conflict versions"),
        BadInput(
            words: ["resolve", key, "--take", "H1=ours", "--take", "H1=base", "--take", "H2=ours"], message: "conflict point H1 is answered twice"),
        BadInput(words: ["resolve", key, "--take", "H1=dead", "--take", "H2=ours"], message: "H1=dead: no head or base of \(key) has that id"),
        BadInput(
            words: ["resolve", key, "--take", "H1=file:/nonexistent/answer", "--take", "H2=ours"],
            message: "cannot read '/nonexistent/answer': no such file"),
        BadInput(words: ["resolve", "settled.md", "--take", "H1=ours"], message: "'settled.md' is not in conflict"),
        BadInput(words: ["resolve", "settled.md", "--content", "$FILE"], message: "'settled.md' is not in conflict"),
        BadInput(words: ["resolve", "missing.md"], message: "no document 'missing.md'"),
        BadInput(words: ["resolve", key, "--take", "H1=ours", "--content", "$FILE"], message: "give only one of --take, --content and --delete"),
        BadInput(words: ["resolve", key, "--content", "$FILE", "--delete"], message: "give only one of --take, --content and --delete"),
        BadInput(words: ["resolve", key, "--take", "H1=ours", "--take", "H2=ours", "--dry-run"], message: "a person's answer needs neither"),
        BadInput(words: ["resolve", key, "--resolver", "overwrite-with-current", "--device", "x <y>"], message: "invalid device name 'x <y>'"),
        BadInput(words: ["resolve"], message: "resolve: missing DOC"),
        BadInput(words: ["conflicts", "missing.md"], message: "no document 'missing.md'"),
        BadInput(words: ["reopen", "missing.md"], message: "no document 'missing.md'"),
        BadInput(words: ["reopen", key], message: "nothing to reopen: no head of '\(key)' is a resolution"),
    ]

    @Test(arguments: badInputs)
    func rejectsWithOneLineAndChangesNothing(row: BadInput) throws {
        let store = try CLIStore()
        try ConflictsCommandTests.saveThreeHeadConflict(in: store)
        try store.save("settled.md", "settled\n")
        try store.writeAttributes(row.attributes)
        for (name, value) in row.config { try store.setStoreConfig(name, value) }
        if let appended = row.appendedToConfig {
            let config = try FileHandle(forWritingTo: URL(fileURLWithPath: store.path + "/config"))
            try config.seekToEnd()
            try config.write(contentsOf: Data(appended.utf8))
            try config.close()
        }
        let file = store.directory.write(.text("answer\n"), to: "answer.txt")
        let words = row.words.map { $0.replacingOccurrences(of: "$FILE", with: file) }

        let before = snapshot(ofStore: store.path)
        let result = try truce(words, store: store.path)
        #expect(result.status == 2, "stdout: \(result.output) stderr: \(result.errorOutput)")
        #expect(result.errorLines.count == 1, "stderr: \(result.errorOutput)")
        #expect(result.errorLines.first?.hasPrefix("truce: ") == true)
        #expect(result.errorLines.first?.contains(row.message) == true, "stderr: \(result.errorOutput)")
        #expect(result.stdout.isEmpty, "stdout: \(result.output)")
        #expect(snapshot(ofStore: store.path) == before)
    }
}

/// `truce explain`: which resolver settles a document, from which config line, with which fallbacks.
@Suite(.timeLimit(.minutes(10))) struct ExplainResolverTests {
    @Test func namesTheResolverItsAttributesLineAndTheFallbackChain() throws {
        let store = try CLIStore()
        try store.saveConflict(
            ResolveCommandTests.key, base: ResolveCommandTests.plans,
            heads: [("laptop", ResolveCommandTests.laptopPlans), ("phone", ResolveCommandTests.phonePlans)])
        // Line 2 matches too, but line 5 comes later and wins, as in git.
        try store.writeAttributes(
            "# which resolver settles what\n*.md merge=union\n*.png merge=overwrite-with-current\n\nnotes/*.md merge=three-way\n")
        #expect(try store.gitInStore("check-attr", "merge", "--", ResolveCommandTests.key).output == "\(ResolveCommandTests.key): merge: three-way\n")

        let plain = try store.run("explain", ResolveCommandTests.key)
        #expect(plain.status == 0, "stderr: \(plain.errorOutput)")
        var lines = plain.output.split(separator: "\n").map(String.init)
        #expect(lines.contains("merge attribute: three-way"))
        #expect(lines.contains("resolver: three-way (from info/attributes line 5: notes/*.md merge=three-way)"), "stdout:\n\(plain.output)")
        #expect(lines.contains("fallbacks: none"))

        try store.setStoreConfig("resolver.three-way.fallback", "list-conflicts")
        try store.setStoreConfig("resolver.three-way.style", "diff3")
        let chained = try store.run("explain", ResolveCommandTests.key)
        #expect(chained.status == 0, "stderr: \(chained.errorOutput)")
        lines = chained.output.split(separator: "\n").map(String.init)
        #expect(lines.contains("resolver: three-way (from info/attributes line 5: notes/*.md merge=three-way)"))
        #expect(lines.contains("fallbacks: list-conflicts"), "stdout:\n\(chained.output)")
        #expect(lines.contains("option: resolver.three-way.fallback = list-conflicts"))
        #expect(lines.contains("option: resolver.three-way.style = diff3"))

        let json = try store.json("explain", ResolveCommandTests.key)
        #expect(json["resolvers"] as? [String] == ["three-way", "list-conflicts"])
        #expect(json["resolverSource"] as? String == "info/attributes line 5: notes/*.md merge=three-way")
        #expect(json["mergeAttribute"] as? String == "three-way")
        #expect(json["error"] == nil)

        // Another Markdown file is decided by line 2.
        try store.save("other.md", "x\n")
        #expect(try store.run("explain", "other.md").output.contains("resolver: union (from info/attributes line 2: *.md merge=union)"))
    }

    @Test func aCRLFAttributesFileNamesItsLineAsGitReadsIt() throws {
        let (store, _) = try ResolveCommandTests.sectionConflict()
        try store.writeAttributes("# which resolver settles what\r\n*.png merge=overwrite-with-current\r\nnotes/*.md merge=three-way\r\n")
        #expect(try store.gitInStore("check-attr", "merge", "--", ResolveCommandTests.key).output == "\(ResolveCommandTests.key): merge: three-way\n")
        let result = try store.run("explain", ResolveCommandTests.key)
        #expect(result.status == 0, "stderr: \(result.errorOutput)")
        #expect(
            result.output.contains("\nresolver: three-way (from info/attributes line 3: notes/*.md merge=three-way)\n"), "stdout:\n\(result.output)")
    }

    @Test func explainWritesNothing() throws {
        let (store, _) = try ResolveCommandTests.sectionConflict()
        let before = snapshot(ofStore: store.path)
        let result = try store.run("explain", ResolveCommandTests.key)
        #expect(result.status == 0)
        #expect(result.output.contains("\nresolver: three-way (from info/attributes line 1: *.md merge=three-way)\n"), "stdout:\n\(result.output)")
        #expect(try store.run("explain", ResolveCommandTests.key, "--json").status == 0)
        #expect(snapshot(ofStore: store.path) == before)
    }

    @Test func anUnknownResolverIsExplainedThenReportedWithExitTwo() throws {
        let store = try CLIStore()
        try store.saveConflict(
            ResolveCommandTests.key, base: ResolveCommandTests.plans,
            heads: [("laptop", ResolveCommandTests.laptopPlans), ("phone", ResolveCommandTests.phonePlans)])
        try store.writeAttributes("*.md merge=nope\n")
        let before = snapshot(ofStore: store.path)
        let result = try store.run("explain", ResolveCommandTests.key)
        #expect(result.status == 2)
        let lines = result.output.split(separator: "\n").map(String.init)
        #expect(lines.first == "\(ResolveCommandTests.key): in conflict")
        #expect(lines.contains("merge attribute: nope"))
        #expect(lines.contains("resolver: none, the configuration is invalid"))
        #expect(result.errorLines == ["truce: " + ResolveCommandTests.unknownNope], "stderr: \(result.errorOutput)")
        #expect(snapshot(ofStore: store.path) == before)

        let json = try store.run("explain", ResolveCommandTests.key, "--json")
        #expect(json.status == 2)
        let report = try jsonObject(json)
        #expect(report["error"] as? String == ResolveCommandTests.unknownNope)
        #expect(report["resolvers"] == nil)
    }
}

// MARK: - Helpers

/// A conflict made through `truce save`: a base, then one head per device made from it, an hour apart.
struct SavedConflict: Sendable {
    let base: String
    /// One version id per device, oldest first.
    let heads: [String]
    /// The head with the latest date: the current version.
    var current: String { heads.last! }
    /// Every head but the current one: what a resolution settles.
    var losers: Set<String> { Set(heads.dropLast()) }
}

extension CLIStore {
    /// Saves `base` on 2026-11-30 at 09:00, then each head from it at 10:00, 11:00, …, so the last head is current.
    @discardableResult
    func saveConflict(_ key: String, base: Data, heads: [(device: String, content: Data)]) throws -> SavedConflict {
        let baseID = try saveBytes(key, base, "--device", "origin", "--date", "2026-11-30T09:00:00Z")
        var ids: [String] = []
        for (index, head) in heads.enumerated() {
            let date = String(format: "2026-11-30T%02d:00:00Z", 10 + index)
            ids.append(try saveBytes(key, head.content, "--device", head.device, "--base", baseID, "--date", date))
        }
        return SavedConflict(base: baseID, heads: ids)
    }

    /// Saves `content` byte for byte through standard input and returns the printed version id.
    func saveBytes(_ key: String, _ content: Data, _ options: String...) throws -> String {
        let result = try truce(["save", key, "-"] + options, store: path, input: content)
        try #require(result.status == 0, "save failed: \(result.errorOutput)")
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Replaces the store's `info/attributes`.
    func writeAttributes(_ text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path + "/info/attributes"))
    }

    /// Sets `name = value` in the store's config with the real git.
    func setStoreConfig(_ name: String, _ value: String) throws {
        let result = try gitInStore("config", name, value)
        try #require(result.status == 0, "git config failed: \(result.errorOutput)")
    }

    /// Runs `git -C <store> arguments…`.
    func gitInStore(_ arguments: String...) throws -> ProcessResult {
        try git(["-C", path] + arguments)
    }
}

/// What `git merge-file -p current base other` prints for these bytes, with no user config that could change it.
func gitMergeFile(current: Data, base: Data, other: Data, options: [String] = []) throws -> ProcessResult {
    let directory = TemporaryDirectory("truce-merge-oracle")
    let files = [directory.write(current, to: "current"), directory.write(base, to: "base"), directory.write(other, to: "other")]
    return try run(
        "/usr/bin/env", ["git", "merge-file", "-p"] + options + files,
        environment: ["GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"])
}

/// A command's `--json` output, whatever its exit code.
func jsonObject(_ result: ProcessResult) throws -> [String: Any] {
    try #require(JSONSerialization.jsonObject(with: result.stdout) as? [String: Any], "stdout: \(result.output) stderr: \(result.errorOutput)")
}

/// The id in `resolve`'s one line of output, `resolved KEY with RESOLVER: ID`.
func resolutionID(in result: ProcessResult, key: String, resolver: String) throws -> String {
    let prefix = "resolved \(key) with \(resolver): "
    try #require(result.output.hasPrefix(prefix) && result.output.hasSuffix("\n"), "stdout: \(result.output) stderr: \(result.errorOutput)")
    let id = String(result.output.dropFirst(prefix.count).dropLast())
    try #require(id.count == 40 && id.allSatisfy(\.isHexDigit), "not a version id: \(id)")
    return id
}

/// Checks a resolution as git and Truce see it: parents are the current version first and then every loser,
/// the trailers name the resolver and each loser once, the document has one head, and `fsck` is clean.
func expectResolution(
    _ id: String, settles conflict: SavedConflict, key: String, resolver: String, in store: CLIStore,
    deleted: Bool = false
) throws {
    let parents = try store.gitInStore("log", "-1", "--format=%P", id).output.trimmingCharacters(in: .newlines).split(separator: " ").map(String.init)
    #expect(parents.first == conflict.current, "parents: \(parents)")
    #expect(parents.count == conflict.heads.count && Set(parents.dropFirst()) == conflict.losers, "parents: \(parents)")

    let message = try store.gitInStore("log", "-1", "--format=%B", id)
    let trailers = try git(["interpret-trailers", "--parse"], input: message.stdout).output.split(separator: "\n").map(String.init)
    #expect(trailers.contains("Document: \(key)"), "trailers: \(trailers)")
    #expect(trailers.filter { $0.hasPrefix("Resolved-By: ") } == ["Resolved-By: \(resolver)"], "trailers: \(trailers)")
    let resolves = trailers.filter { $0.hasPrefix("Resolves: ") }.map { String($0.dropFirst("Resolves: ".count)) }
    #expect(resolves.count == conflict.losers.count && Set(resolves) == conflict.losers, "trailers: \(trailers)")

    let versions = try store.json("versions", key)
    #expect(versions["state"] as? String == (deleted ? "deleted" : "settled"))
    #expect((versions["current"] as? [String: Any])?["id"] as? String == id)
    #expect((versions["current"] as? [String: Any])?["resolvedBy"] as? String == resolver)
    #expect((versions["conflicts"] as? [Any])?.isEmpty == true)
    #expect(try store.run("status").output == "no documents in conflict\n")
    let fsck = try store.gitInStore("fsck", "--strict")
    #expect(fsck.status == 0, "fsck: \(fsck.output) \(fsck.errorOutput)")
}
